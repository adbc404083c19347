package console

import (
	"strconv"
	"strings"
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

// place says briefly where an answer goes: "slack ops C1/1700000000.1",
// "github gh acme/api#7", "email support support@acme.example ← a@b.example".
func place(t reply.To) string {
	parts := []string{t.Source, t.Connector}
	switch t.Source {
	case reply.SourceSlack:
		where := t.Channel
		if t.ThreadTS != "" {
			where += "/" + t.ThreadTS
		}
		parts = append(parts, where)
	case reply.SourceGitHub:
		where := t.Repo + "#" + strconv.Itoa(t.Number)
		if t.ReviewCommentID != 0 {
			where += " review comment " + strconv.FormatInt(t.ReviewCommentID, 10)
		}
		parts = append(parts, where)
	case reply.SourceEmail:
		parts = append(parts, t.Mailbox)
		if t.From != "" {
			parts = append(parts, "to "+t.From)
		}
	}
	return strings.Join(parts, " ")
}

// replyToOf is where an answer to a record goes (its metadata.replyTo), or "".
func replyToOf(md map[string]any) string {
	t, ok := reply.FromMetadata(md)
	if !ok {
		return ""
	}
	return place(t)
}
