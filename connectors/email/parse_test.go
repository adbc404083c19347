package email

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// fixedClock never moves: the parse budget never runs out.
func fixedClock() time.Time { return testNow }

// crlf turns a readable fixture into wire format.
func crlf(s string) string { return strings.ReplaceAll(strings.TrimLeft(s, "\n"), "\n", "\r\n") }

const plainMail = `
From: Jane Doe <Jane@Example.com>
To: support@acme.test, Ops <ops@acme.test>
Subject: Deploy of build 42
Date: Mon, 02 Mar 2026 10:00:00 +0000
Message-ID: <plain-1@example.com>
Content-Type: text/plain; charset=utf-8

Ship it, the build is green.
`

const htmlMail = `
From: jane@example.com
Subject: HTML only
Message-ID: <html-1@example.com>
Content-Type: text/html; charset=utf-8

<html><body><p>Ship it, the <b>caf&eacute;</b> build is <a href="https://ci.example.org/42">green</a>.</p></body></html>
`

const attachmentMail = `
From: Jane Doe <jane@example.com>
Subject: Report attached
Message-ID: <att-1@example.com>
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="b1"

--b1
Content-Type: multipart/alternative; boundary="b2"

--b2
Content-Type: text/plain; charset=utf-8

Here is the report.
--b2
Content-Type: text/html; charset=utf-8

<p>Here is the <b>report</b>.</p>
--b2--
--b1
Content-Type: application/pdf; name="report.pdf"
Content-Disposition: attachment; filename="report.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PC9UeXBlL0NhdGFsb2c+PgplbmRvYmoK
--b1
Content-Type: image/png
Content-Disposition: inline; filename="logo.png"
Content-Transfer-Encoding: base64

iVBORw0KGgo=
--b1--
`

const quotedMail = `
From: Jane Doe <jane@example.com>
Subject: Re: Deploy
Message-ID: <reply-2@example.com>
In-Reply-To: <reply-1@example.com>
References: <root-0@example.com> <reply-1@example.com>
Content-Type: text/plain; charset=utf-8

Sounds good, go ahead.

On Mon, Mar 2, 2026 at 10:00 AM Bob <bob@example.com> wrote:
> Shall we deploy build 42?
> It passed CI.

--
Jane Doe
CTO, Example Inc.
`

const latin1Mail = `
From: =?iso-8859-1?Q?Ren=E9e?= <renee@example.fr>
Subject: =?iso-8859-1?Q?Caf=E9_cr=E8me_br=FBl=E9e?=
Message-ID: <latin-1@example.fr>
Content-Type: text/plain; charset=iso-8859-1
Content-Transfer-Encoding: quoted-printable

D=E9j=E0 vu.
`

func mailWith(headers string) string {
	return crlf("From: Jane Doe <jane@example.com>\nSubject: Hello\nMessage-ID: <h-1@example.com>\n" + headers +
		"Content-Type: text/plain\n\nHello there.\n")
}

func testMapConfig() Config {
	return Config{Name: "support", Addr: "127.0.0.1:143", Username: "u", Password: "p",
		VIPSenders: []string{"@vip.example", "boss@acme.test"}}.WithDefaults()
}

func mapRaw(t *testing.T, cfg Config, raw string) (*message, connectors.Item) {
	t.Helper()
	m, err := parseMessage([]byte(raw), false, fixedClock)
	require.NoError(t, err)
	return m, cfg.item(m, "INBOX", 7, deliveryID(m.MessageID, []byte(raw), 1, 7, "INBOX"))
}

func TestParseAndMap(t *testing.T) {
	cfg := testMapConfig()
	cases := []struct {
		name  string
		raw   string
		check func(t *testing.T, m *message, it connectors.Item)
	}{
		{"plain", crlf(plainMail), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, Kind, it.Kind)
			assert.Equal(t, inbox.PriorityMedium, it.Priority)
			assert.Equal(t, `Jane Doe <jane@example.com> wrote "Deploy of build 42": Ship it, the build is green.`, it.Summary)
			assert.Equal(t, "plain-1@example.com", it.DedupeKey)
			assert.Equal(t, "plain-1@example.com", it.CoalesceKey)
			assert.Equal(t, connectors.Fields{Source: "email", Connector: "support", Kind: "email", Author: "jane@example.com",
				Mailbox: "INBOX", From: "jane@example.com", Subject: "Deploy of build 42"}, it.Fields)
			assert.Equal(t, inbox.Attributes{{Key: "from", Value: "jane@example.com"}, {Key: "subject", Value: "Deploy of build 42"},
				{Key: "mailbox", Value: "INBOX"}, {Key: "message_id", Value: "plain-1@example.com"}}, it.Attributes)
			assert.Equal(t, VerifiedBy, it.Metadata[connectors.MetaVerifiedBy])
			assert.Equal(t, false, it.Metadata[connectors.MetaAuthorIsBot])
			assert.Equal(t, &connectors.Message{Name: "Jane Doe", From: "email", Text: "Ship it, the build is green."}, it.Message)
			assert.Empty(t, it.Skip)
			var p map[string]any
			require.NoError(t, json.Unmarshal(it.Payload, &p))
			assert.Equal(t, "2026-03-02T10:00:00Z", p["date"])
			assert.Len(t, p["to"], 2)
		}},
		{"html only is converted", crlf(htmlMail), func(t *testing.T, m *message, it connectors.Item) {
			assert.True(t, m.FromHTML)
			assert.Contains(t, m.Text, "café")
			assert.Contains(t, m.Text, "https://ci.example.org/42")
			assert.NotContains(t, it.Summary, "<p>")
			assert.Contains(t, it.Summary, `jane@example.com wrote "HTML only": Ship it, the *café* build is green`)
		}},
		{"attachments listed, not inlined", crlf(attachmentMail), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, "Here is the report.", m.Text)
			assert.False(t, m.FromHTML)
			require.Len(t, m.Attachments, 2)
			assert.Equal(t, attachment{Name: "report.pdf", Type: "application/pdf", Size: 48}, m.Attachments[0])
			assert.Equal(t, "logo.png", m.Attachments[1].Name)
			assert.Equal(t, "image/png", m.Attachments[1].Type)
			assert.True(t, strings.HasSuffix(it.Summary, "(2 attachments)"), it.Summary)
			assert.NotContains(t, string(it.Payload), "JVBERi0")
			assert.Contains(t, string(it.Payload), `"name":"report.pdf"`)
		}},
		{"quoted reply and signature stripped", crlf(quotedMail), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, "Sounds good, go ahead.", m.Reply)
			assert.Contains(t, m.Text, "Shall we deploy")
			assert.Equal(t, `Jane Doe <jane@example.com> wrote "Re: Deploy": Sounds good, go ahead.`, it.Summary)
			assert.Equal(t, "Sounds good, go ahead.", it.Message.Text)
			assert.Equal(t, "root-0@example.com", it.CoalesceKey)
			assert.Equal(t, "reply-2@example.com", it.DedupeKey)
			assert.Equal(t, []string{"reply-1@example.com"}, m.InReplyTo)
		}},
		{"in-reply-to is the root without references", mailWith("In-Reply-To: <parent@example.com>\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, "parent@example.com", it.CoalesceKey)
		}},
		{"latin-1 subject decoded", crlf(latin1Mail), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, "Café crème brûlée", m.Subject)
			assert.Equal(t, "Renée", it.Message.Name)
			assert.Equal(t, "Déjà vu.", m.Text)
			assert.Contains(t, it.Summary, `Renée <renee@example.fr> wrote "Café crème brûlée": Déjà vu.`)
		}},
		{"raw 8-bit subject read in the body charset", "From: a@example.com\r\nSubject: Caf\xe9 au lait\r\n" +
			"Message-ID: <raw8@example.com>\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\nBody\r\n",
			func(t *testing.T, m *message, it connectors.Item) {
				assert.Equal(t, "Café au lait", m.Subject)
			}},
		{"list mail is low", mailWith("List-Id: Dev list <dev.lists.example.com>\nX-Priority: 1\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, inbox.PriorityLow, it.Priority)
			assert.Equal(t, "mailing list", it.Metadata["priority_reason"])
		}},
		{"bulk is low", mailWith("Precedence: bulk\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, inbox.PriorityLow, it.Priority)
		}},
		{"x-priority 1 is high", mailWith("X-Priority: 1 (Highest)\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, inbox.PriorityHigh, it.Priority)
		}},
		{"importance high is high", mailWith("Importance: High\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, inbox.PriorityHigh, it.Priority)
		}},
		{"x-priority 5 is low", mailWith("X-Priority: 5\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, inbox.PriorityLow, it.Priority)
		}},
		{"vip domain is high, even on a list", strings.Replace(mailWith("List-Id: <x.example>\n"), "jane@example.com", "ceo@VIP.example", 1),
			func(t *testing.T, m *message, it connectors.Item) {
				assert.Equal(t, inbox.PriorityHigh, it.Priority)
				assert.Equal(t, "vip sender", it.Metadata["priority_reason"])
			}},
		{"vip address is high", strings.Replace(mailWith(""), "jane@example.com", "Boss@acme.test", 1), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, inbox.PriorityHigh, it.Priority)
		}},
		{"auto-reply skipped", mailWith("Auto-Submitted: auto-replied\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Contains(t, it.Skip, "Auto-Submitted: auto-replied")
			assert.Equal(t, true, it.Metadata[connectors.MetaAuthorIsBot])
		}},
		{"auto-submitted no is a person", mailWith("Auto-Submitted: no\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Empty(t, it.Skip)
		}},
		{"x-autoreply skipped", mailWith("X-Autoreply: yes\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.NotEmpty(t, it.Skip)
		}},
		{"missing message-id falls back to a digest", crlf("From: x@example.com\nSubject: s\n\nbody\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.True(t, strings.HasPrefix(it.DedupeKey, "sha256:"), it.DedupeKey)
			assert.Equal(t, it.DedupeKey, it.CoalesceKey)
			assert.NotContains(t, it.Attributes.String("message_id"), "sha256")
		}},
		{"no subject and no body", crlf("From: x@example.com\nMessage-ID: <e@x>\n\n"), func(t *testing.T, m *message, it connectors.Item) {
			assert.Equal(t, "x@example.com wrote (no subject)", it.Summary)
		}},
		{"long body excerpt bounded", crlf("From: x@example.com\nSubject: s\nMessage-ID: <l@x>\n\n" + strings.Repeat("word ", 400) + "\n"),
			func(t *testing.T, m *message, it connectors.Item) {
				ex := strings.TrimPrefix(it.Summary, `x@example.com wrote "s": `)
				assert.LessOrEqual(t, len([]rune(ex)), connectors.ExcerptLen)
				assert.True(t, strings.HasSuffix(ex, "…"))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, it := mapRaw(t, cfg, tc.raw)
			tc.check(t, m, it)
		})
	}
}

func TestUnknownCharsetSubjectKept(t *testing.T) {
	raw := mailWith("")
	raw = strings.Replace(raw, "Subject: Hello", "Subject: =?x-klingon?Q?Qapla=27?=", 1)
	m, err := parseMessage([]byte(raw), false, fixedClock)
	require.NoError(t, err)
	assert.NotEmpty(t, m.Subject)
	assert.Contains(t, m.Subject, "Qapla")
}

func TestInvalidUTF8SubjectReplaced(t *testing.T) {
	raw := "From: a@example.com\r\nSubject: bad \xff\xfe bytes\r\nMessage-ID: <u@x>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nx\r\n"
	m, err := parseMessage([]byte(raw), false, fixedClock)
	require.NoError(t, err)
	// Windows-1252 reads any byte, so the subject is decoded rather than lost.
	assert.True(t, strings.HasPrefix(m.Subject, "bad "), m.Subject)
	assert.True(t, strings.HasSuffix(m.Subject, " bytes"), m.Subject)
}

func TestAutoReplyDeliveredWhenConfigured(t *testing.T) {
	cfg := testMapConfig()
	cfg.DeliverAutoReplies = true
	_, it := mapRaw(t, cfg, mailWith("Auto-Submitted: auto-replied\n"))
	assert.Empty(t, it.Skip)
	assert.Equal(t, true, it.Metadata[connectors.MetaAuthorIsBot])
}

func TestUnreadable(t *testing.T) {
	for name, raw := range map[string]string{
		"empty":        "",
		"blank":        "\r\n\r\n",
		"too deep":     deepMultipart(maxDepth+1, ""),
		"many parts":   manyParts(maxParts),
		"deep forward": strings.Repeat("Content-Type: message/rfc822\r\n\r\n", maxDepth+1) + "x\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseMessage([]byte(raw), false, fixedClock)
			assert.Error(t, err)
		})
	}
}

func TestBrokenBodyKeepsHeaders(t *testing.T) {
	raw := crlf(`
From: jane@example.com
Subject: Broken
Message-ID: <broken@example.com>
Content-Type: multipart/mixed; boundary="zz"

--zz
Content-Type: text/plain

First part, never closed.
`)
	m, err := parseMessage([]byte(raw), false, fixedClock)
	require.NoError(t, err)
	assert.Equal(t, "Broken", m.Subject)
	assert.Contains(t, m.Text, "First part")
}

func TestTruncatedMessage(t *testing.T) {
	raw := crlf(attachmentMail)
	cut := raw[:strings.Index(raw, "JVBERi0")+10]
	m, err := parseMessage([]byte(cut), true, fixedClock)
	require.NoError(t, err)
	assert.True(t, m.Truncated)
	assert.Empty(t, m.BodyError)
	assert.Equal(t, "Here is the report.", m.Text)
}

func TestLenientHeader(t *testing.T) {
	cases := []struct {
		name, raw           string
		from, subject, text string
		notes               []string
		messageID           string
	}{
		{"mbox From line", "From jane@example.com Mon Mar  2 10:00:00 2026\r\nFrom: jane@example.com\r\nSubject: s\r\n\r\nbody\r\n",
			"jane@example.com", "s", "body", []string{`skipped the mbox "From " line`}, ""},
		{"a From field with a space before its colon is a field", "From : jane@example.com\r\nSubject: s\r\n\r\nbody\r\n",
			"jane@example.com", "s", "body", nil, ""},
		{"malformed line and its folds skipped", "Subject: s\r\nthis is not a field\r\n folded\r\nFrom: jane@example.com\r\nMessage-ID: <m@x>\r\n\r\nbody\r\n",
			"jane@example.com", "s", "body", []string{`skipped malformed header line 2: "this is not a field"`,
				`skipped malformed header line 3: " folded"`}, "m@x"},
		{"folded first line skipped", " stray fold\r\nFrom: jane@example.com\r\n\r\nbody\r\n",
			"jane@example.com", "", "body", []string{`skipped malformed header line 1: " stray fold"`}, ""},
		{"no blank line before the body", "From: jane@example.com\r\nSubject: s\r\nfirst body line\r\nsecond\r\n",
			"jane@example.com", "s", "first body line\nsecond", []string{"header line 3 is not a field and no field follows: the body starts there"}, ""},
		{"no header at all", "just a body\r\n\r\nand more\r\n",
			"", "", "just a body\n\nand more", []string{"header line 1 is not a field and no field follows: the body starts there", "no header fields"}, ""},
		{"multipart without boundary shown as text", "From: jane@example.com\r\nContent-Type: multipart/mixed\r\n\r\nplain words\r\n",
			"jane@example.com", "", "plain words", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := parseMessage([]byte(tc.raw), false, fixedClock)
			require.NoError(t, err)
			if tc.from == "" {
				assert.Nil(t, m.From)
			} else if assert.NotNil(t, m.From) {
				assert.Equal(t, tc.from, m.From.Address)
			}
			assert.Equal(t, tc.subject, m.Subject)
			assert.Equal(t, tc.text, m.Text)
			assert.Equal(t, tc.notes, m.Notes.all())
			assert.Equal(t, tc.messageID, m.MessageID)
		})
	}
}

func TestLongHeaderBlockBounded(t *testing.T) {
	raw := "From: jane@example.com\r\nX-Pad: " + strings.Repeat("a", maxHeaderBytes) + "\r\nSubject: late\r\n\r\nbody\r\n"
	m, err := parseMessage([]byte(raw), false, fixedClock)
	require.NoError(t, err)
	assert.Equal(t, "jane@example.com", m.From.Address)
	assert.Empty(t, m.Subject, "the line that crosses the bound and what follows are body")
	assert.Contains(t, m.Notes.all()[0], "header block longer than")
}

func TestParseNotesBounded(t *testing.T) {
	raw := strings.Repeat("junk line\r\n", 100) + "From: jane@example.com\r\n\r\nbody\r\n"
	m, err := parseMessage([]byte(raw), false, fixedClock)
	require.NoError(t, err)
	notes := m.Notes.all()
	assert.Len(t, notes, maxNotes+1)
	assert.Equal(t, "and 80 more", notes[maxNotes])

	it := testMapConfig().item(m, "INBOX", 1, "id")
	var p map[string]any
	require.NoError(t, json.Unmarshal(it.Payload, &p))
	assert.Len(t, p["parse_notes"], maxNotes+1)
}
