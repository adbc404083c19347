package agent

import (
	"strings"
	"unicode/utf8"

	"github.com/signalgate/signalgate/inbox"
)

// RenderXML renders a signal for the model the way Mastra does:
//
//	<TAG a="1" b="x">contents</TAG>
//
// Contents escape & < >; attribute values also escape ". Attributes keep their
// insertion order and nil values are left out. Empty contents render as
// <TAG a="1" /> (with the space). A user signal without attributes is just its
// contents, verbatim: that is a user's message, not markup.
//
// Anything else is always well-formed XML 1.0. Characters XML 1.0 cannot carry
// at all (C0 controls other than tab, LF and CR; U+FFFE, U+FFFF; surrogates;
// invalid UTF-8) are replaced by U+FFFD in contents and attribute values, since
// there is no escape for them and dropping them silently would hide that the
// text was altered. Names are validated on input; should an invalid one still
// reach here, the attribute is left out and an invalid tag falls back to the
// type's default tag, so a bad producer cannot break the markup.
func RenderXML(s Signal) string {
	if s.Type == TypeUser && !hasRenderable(s.Attributes) {
		return s.Contents
	}
	tag := s.TagName
	if !ValidName(tag) {
		tag = s.Type.DefaultTag()
		if tag == "" {
			tag = "signal"
		}
	}
	var b strings.Builder
	b.Grow(len(tag)*2 + len(s.Contents) + 16*len(s.Attributes) + 8)
	b.WriteByte('<')
	b.WriteString(tag)
	for _, kv := range renderable(s.Attributes) {
		b.WriteByte(' ')
		b.WriteString(kv.Key)
		b.WriteString(`="`)
		writeEscaped(&b, inbox.FormatValue(kv.Value), true)
		b.WriteByte('"')
	}
	if s.Contents == "" {
		b.WriteString(" />")
		return b.String()
	}
	b.WriteByte('>')
	writeEscaped(&b, s.Contents, false)
	b.WriteString("</")
	b.WriteString(tag)
	b.WriteByte('>')
	return b.String()
}

func hasRenderable(a inbox.Attributes) bool {
	for _, kv := range a {
		if kv.Value != nil && ValidName(kv.Key) {
			return true
		}
	}
	return false
}

// renderable drops nil values and invalid names and folds repeated keys into
// their first position (last value wins), as a duplicate attribute is not
// well-formed XML.
func renderable(a inbox.Attributes) inbox.Attributes {
	out := make(inbox.Attributes, 0, len(a))
	for _, kv := range a {
		if kv.Value == nil || !ValidName(kv.Key) {
			continue
		}
		out = out.Set(kv.Key, kv.Value)
	}
	return out
}

// isXMLChar reports whether r is a Char of XML 1.0.
func isXMLChar(r rune) bool {
	switch {
	case r == 0x09 || r == 0x0A || r == 0x0D:
		return true
	case r >= 0x20 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

func writeEscaped(b *strings.Builder, s string, attr bool) {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '&':
				b.WriteString("&amp;")
			case c == '<':
				b.WriteString("&lt;")
			case c == '>':
				b.WriteString("&gt;")
			case c == '"' && attr:
				b.WriteString("&quot;")
			case !isXMLChar(rune(c)):
				b.WriteRune(utf8.RuneError)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !isXMLChar(r) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}
