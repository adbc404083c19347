package reply

import "strings"

// MarkerToken is what names a reply inside a marker the gateway writes in a post's
// text (GitHub's hidden `<!-- signalgate:reply:ID -->`). Only the gateway writes it:
// senders run a reply's text through NeutralizeMarkers, so an agent quoting another
// reply's marker can never make its post look like that reply.
const MarkerToken = "signalgate:reply:"

// markerBreak is put inside every MarkerToken of a reply's text: U+2060 WORD JOINER,
// which has no width and allows no line break, so people see the text as written (and
// a quoted HTML comment stays hidden on GitHub) while no marker can match it.
const markerBreak = "\u2060"

// markerHead is the part of MarkerToken markerBreak follows.
const markerHead = "signalgate"

// NeutralizeMarkers breaks every MarkerToken in text (in any ASCII letter case) with a WORD
// JOINER after "signalgate", leaving everything else as it is. Running it again changes
// nothing.
func NeutralizeMarkers(text string) string {
	lower := asciiLower(text)
	if !strings.Contains(lower, MarkerToken) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + len(markerBreak)*strings.Count(lower, MarkerToken))
	for {
		i := strings.Index(lower, MarkerToken)
		if i < 0 {
			break
		}
		cut := i + len(markerHead)
		b.WriteString(text[:cut])
		b.WriteString(markerBreak)
		text, lower = text[cut:], lower[cut:]
	}
	b.WriteString(text)
	return b.String()
}

// asciiLower lowers ASCII letters only, so every byte keeps its offset (strings.ToLower
// changes lengths for some runes and for invalid UTF-8).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
