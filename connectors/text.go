package connectors

import (
	"html"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ExcerptLen is the longest excerpt a summary quotes.
const ExcerptLen = 240

var (
	htmlComment = regexp.MustCompile(`(?s)<!--.*?(-->|$)`)
	// Issue and PR templates hide logs and checklists in <details>; a model gains
	// nothing from their folded contents in a one-line summary.
	detailsBlock = regexp.MustCompile(`(?is)<details[\s>].*?(</details\s*>|$)`)
	// Only things that look like tags: "a < b" and "x<y" stay as they are.
	htmlTag = regexp.MustCompile(`</?[A-Za-z][A-Za-z0-9-]*(\s[^<>]*)?/?>`)
	spaces  = regexp.MustCompile(`\s+`)
)

// PlainText removes HTML comments, <details> blocks and tags, unescapes entities
// and collapses whitespace to single spaces.
func PlainText(s string) string {
	s = htmlComment.ReplaceAllString(s, " ")
	s = detailsBlock.ReplaceAllString(s, " ")
	s = htmlTag.ReplaceAllString(s, " ")
	s = html.UnescapeString(s)
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// Excerpt is PlainText cut to at most max runes, at a word boundary when one is
// near, ending with "…" when cut.
func Excerpt(s string, max int) string {
	s = PlainText(s)
	return Truncate(s, max)
}

// Truncate cuts s to at most max runes (the ellipsis included), preferring a word
// boundary in the last fifth.
func Truncate(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)[:max-1]
	cut := len(r)
	for i := len(r) - 1; i >= len(r)*4/5; i-- {
		if r[i] == ' ' {
			cut = i
			break
		}
	}
	return strings.TrimRight(string(r[:cut]), " ") + "…"
}

// FirstLine returns the first non-empty line of s, trimmed.
func FirstLine(s string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}
