package agent

import (
	"encoding/xml"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

func attrs(kv ...any) inbox.Attributes {
	var a inbox.Attributes
	for i := 0; i < len(kv); i += 2 {
		a = append(a, inbox.Attribute{Key: kv[i].(string), Value: kv[i+1]})
	}
	return a
}

func TestRenderXML(t *testing.T) {
	tests := []struct {
		name string
		sig  Signal
		want string
	}{
		{"reactive plain", Signal{Type: TypeReactive, TagName: "system-reminder", Contents: "check CI"},
			`<system-reminder>check CI</system-reminder>`},
		{"attributes in insertion order", Signal{Type: TypeReactive, TagName: "alert", Contents: "x", Attributes: attrs("z", "1", "a", "2", "m", "3")},
			`<alert z="1" a="2" m="3">x</alert>`},
		{"contents escape & < > only", Signal{Type: TypeReactive, TagName: "t", Contents: `a & b < c > d "q" 's'`},
			`<t>a &amp; b &lt; c &gt; d "q" 's'</t>`},
		{"attribute escapes quote too", Signal{Type: TypeReactive, TagName: "t", Contents: "c", Attributes: attrs("v", `<a href="x">&'`)},
			`<t v="&lt;a href=&quot;x&quot;&gt;&amp;'">c</t>`},
		{"already escaped text is escaped again", Signal{Type: TypeReactive, TagName: "t", Contents: "&amp;"},
			`<t>&amp;amp;</t>`},
		{"empty contents self-closing", Signal{Type: TypeState, TagName: "state", Attributes: attrs("a", int64(1))},
			`<state a="1" />`},
		{"empty contents no attributes", Signal{Type: TypeReactive, TagName: "ping"},
			`<ping />`},
		{"user without attributes is plain text", Signal{Type: TypeUser, TagName: "user", Contents: "hi <b> & bye"},
			`hi <b> & bye`},
		{"user with only nil attributes is plain text", Signal{Type: TypeUser, TagName: "user", Contents: "hi", Attributes: attrs("a", nil)},
			`hi`},
		{"user with attributes is tagged", Signal{Type: TypeUser, TagName: "user", Contents: "hi & bye", Attributes: attrs("name", "Ann", "from", "slack")},
			`<user name="Ann" from="slack">hi &amp; bye</user>`},
		{"numbers and bools", Signal{Type: TypeReactive, TagName: "n", Contents: "c",
			Attributes: attrs("i", 42, "f", 1.5, "w", float64(3), "neg", -0.25, "big", int64(1234567890123), "t", true, "fl", false)},
			`<n i="42" f="1.5" w="3" neg="-0.25" big="1234567890123" t="true" fl="false">c</n>`},
		{"nil attribute dropped", Signal{Type: TypeReactive, TagName: "t", Contents: "c", Attributes: attrs("a", "1", "b", nil, "c", "3")},
			`<t a="1" c="3">c</t>`},
		{"unicode kept", Signal{Type: TypeNotification, TagName: "notification", Contents: "héllo 世界 🚀", Attributes: attrs("who", "Zoë 🙂")},
			`<notification who="Zoë 🙂">héllo 世界 🚀</notification>`},
		{"whitespace kept", Signal{Type: TypeReactive, TagName: "t", Contents: "a\n\tb\r\n", Attributes: attrs("v", "x\ny")},
			"<t v=\"x\ny\">a\n\tb\r\n</t>"},
		{"control chars replaced", Signal{Type: TypeReactive, TagName: "t", Contents: "a\x00b\x1bc", Attributes: attrs("v", "\x07")},
			"<t v=\"\uFFFD\">a\uFFFDb\uFFFDc</t>"},
		{"invalid utf-8 and noncharacters replaced", Signal{Type: TypeReactive, TagName: "t", Contents: "a\xffb\uFFFEc\xed\xa0\x80"},
			"<t>a\uFFFDb\uFFFDc\uFFFD\uFFFD\uFFFD</t>"},
		{"duplicate keys fold", Signal{Type: TypeReactive, TagName: "t", Contents: "c", Attributes: attrs("a", "1", "b", "2", "a", "3")},
			`<t a="3" b="2">c</t>`},
		{"invalid attribute name left out", Signal{Type: TypeReactive, TagName: "t", Contents: "c", Attributes: attrs("bad name", "1", "ok", "2")},
			`<t ok="2">c</t>`},
		{"invalid tag falls back to the type default", Signal{Type: TypeReactive, TagName: "1bad", Contents: "c"},
			`<system-reminder>c</system-reminder>`},
		{"dotted and dashed names", Signal{Type: TypeReactive, TagName: "_a.b-c", Contents: "c", Attributes: attrs("x.y-z_", "1")},
			`<_a.b-c x.y-z_="1">c</_a.b-c>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RenderXML(tt.sig)
			require.Equal(t, tt.want, got)
			require.Equal(t, got, tt.sig.XML())
			if !(tt.sig.Type == TypeUser && !hasRenderable(tt.sig.Attributes)) {
				require.NoError(t, wellFormed(got))
			}
		})
	}
}

// wellFormed decodes s as one XML element and nothing else.
func wellFormed(s string) error {
	d := xml.NewDecoder(strings.NewReader(s))
	d.Strict = true
	depth, roots := 0, 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 {
				return errors.New("text outside the root element")
			}
		default:
			return errors.New("unexpected token")
		}
	}
	if roots != 1 || depth != 0 {
		return errors.New("not exactly one element")
	}
	return nil
}

// The decoded text and attribute values must be the input, after the
// documented replacement of characters XML cannot carry.
func decodeOne(t *testing.T, s string) (attrs []xml.Attr, text string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	var b strings.Builder
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		switch x := tok.(type) {
		case xml.StartElement:
			attrs = x.Attr
		case xml.CharData:
			b.Write(x)
		}
	}
	return attrs, b.String()
}

// sanitized replaces each invalid byte and each non-XML character by U+FFFD,
// as ranging over a string decodes it.
func sanitized(s string) string {
	var b strings.Builder
	for _, r := range s {
		if !isXMLChar(r) {
			r = '\uFFFD'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// normalizeNewlines mirrors XML end-of-line handling: CRLF and CR read as LF.
// (encoding/xml leaves tab and LF in attribute values alone.)
func normalizeNewlines(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

func FuzzRenderXML(f *testing.F) {
	f.Add("reactive", "alert", "hello & <world>", "v", `"quoted" & <x>`, int64(3), true)
	f.Add("user", "user", "plain", "name", "Ann", int64(0), false)
	f.Add("user", "user", "", "", "", int64(0), false)
	f.Add("state", "state", "", "k", "", int64(-1), true)
	f.Add("notification", "n", "a\x00b\xffc\uFFFE]]>", "a", "\x1b\r\n\t", int64(1), false)
	f.Add("reactive", "1bad", "]]>", "bad name", "x", int64(2), true)
	f.Fuzz(func(t *testing.T, typ, tag, contents, key, value string, n int64, b bool) {
		s := Signal{Type: SignalType(typ), TagName: tag, Contents: contents}
		if key != "" {
			s.Attributes = attrs(key, value, "n", n, "b", b)
		}
		got := RenderXML(s)
		if s.Type == TypeUser && !hasRenderable(s.Attributes) {
			if got != contents {
				t.Fatalf("plain user signal altered: %q -> %q", contents, got)
			}
			return
		}
		if err := wellFormed(got); err != nil {
			t.Fatalf("not well-formed: %v\n%q", err, got)
		}
		decAttrs, text := decodeOne(t, got)
		if want := normalizeNewlines(sanitized(contents)); text != want {
			t.Fatalf("contents round trip: want %q, got %q", want, text)
		}
		if ValidName(key) && key != "n" && key != "b" {
			want := []xml.Attr{
				{Name: xml.Name{Local: key}, Value: normalizeNewlines(sanitized(value))},
				{Name: xml.Name{Local: "n"}, Value: inbox.FormatValue(n)},
				{Name: xml.Name{Local: "b"}, Value: inbox.FormatValue(b)},
			}
			if !reflect.DeepEqual(want, decAttrs) {
				t.Fatalf("attributes round trip: want %q, got %q (%q)", want, decAttrs, got)
			}
		}
	})
}
