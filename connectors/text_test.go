package connectors

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"Fixed it.<!-- internal: ping @ops -->\n\nThanks!":                          "Fixed it. Thanks!",
		"<!-- Please fill in the template":                                          "",
		"Logs:\n<details><summary>trace</summary>\n\npanic: boom\n</details>\nDone": "Logs: Done",
		"<p>Use <code>x &lt; y</code> &amp; <b>ship</b></p>":                        "Use x < y & ship",
		"a < b and c > d":     "a < b and c > d",
		"Vec<T> stays? x<y":   "Vec stays? x<y",
		"  spaced \t\n out  ": "spaced out",
	} {
		assert.Equal(t, want, PlainText(in), in)
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("word ", 100)
	ex := Excerpt(long, ExcerptLen)
	assert.LessOrEqual(t, utf8.RuneCountInString(ex), ExcerptLen)
	assert.True(t, strings.HasSuffix(ex, "word…"), ex)

	assert.Equal(t, "short", Excerpt("short", ExcerptLen))
	uni := strings.Repeat("ü", 300)
	assert.Equal(t, ExcerptLen, utf8.RuneCountInString(Excerpt(uni, ExcerptLen)))
	assert.Equal(t, "first", FirstLine("\n  first \nsecond"))
}
