package inbox

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// CleanID turns what a template can render into an id the agent API accepts, or
// leaves CheckID a reason to refuse it.
func TestCleanID(t *testing.T) {
	for in, want := range map[string]string{
		"ACME Corp\nLondon office": "ACME Corp London office",
		"a\r\n\tb":                 "a b",
		" \x00lead\x7f":            "lead",
		"bad \xff byte":            "bad \uFFFD byte",
		"\u0085next line":          "next line",
		"plain":                    "plain",
	} {
		got := CleanID(in)
		require.Equal(t, want, got, "CleanID(%q)", in)
		require.NoError(t, CheckID(got))
	}
	require.Equal(t, "", CleanID("\n\t"))
	require.ErrorContains(t, CheckID(CleanID(strings.Repeat("x", MaxIDBytes+1))), "longer than 512 bytes")
	require.ErrorContains(t, CheckID("a\nb"), "contains control characters")
}
