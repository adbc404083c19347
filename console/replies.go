package console

import (
	"unicode/utf8"

	"github.com/signalgate/signalgate/reply"
)

// excerptRunes bounds a reply's text on the thread page; the admin API has all of it.
const excerptRunes = 280

// excerpt is the start of s, cut at a character boundary.
func excerpt(s string) string {
	if utf8.RuneCountInString(s) <= excerptRunes {
		return s
	}
	return string([]rune(s)[:excerptRunes]) + "…"
}

// replyToOf is where an answer to a record goes (its metadata.replyTo), described by
// its kind ("slack ops C1/1700000000.1"), or "".
func replyToOf(ps reply.Places, md map[string]any) string {
	t, ok := reply.FromMetadata(md)
	if !ok {
		return ""
	}
	return ps.Describe(t)
}
