package email

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// deepMultipart nests levels multipart entities around one text part: each level
// costs a pass over the rest of the message, so 16,000 levels in under 1 MB took
// minutes to read without a depth limit.
func deepMultipart(levels int, headers string) string {
	var b strings.Builder
	b.WriteString("From: attacker@example.com\r\nSubject: deep\r\n" + headers + "MIME-Version: 1.0\r\n")
	for i := range levels {
		fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=\"b%d\"\r\n\r\n--b%d\r\n", i, i)
	}
	b.WriteString("Content-Type: text/plain\r\n\r\nhi\r\n")
	return b.String()
}

// manyParts is one multipart of n attachments (n+1 entities with the root).
func manyParts(n int) string {
	var b strings.Builder
	b.WriteString("From: attacker@example.com\r\nSubject: parts\r\nContent-Type: multipart/mixed; boundary=\"p\"\r\n\r\n")
	for i := range n {
		fmt.Fprintf(&b, "--p\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"f%d.bin\"\r\n\r\nx\r\n", i)
	}
	b.WriteString("--p--\r\n")
	return b.String()
}

func TestParseLimits(t *testing.T) {
	m, err := parseMessage([]byte(deepMultipart(maxDepth, "")), false, fixedClock)
	require.NoError(t, err, "as deep as allowed")
	assert.Equal(t, "hi", m.Text)

	_, err = parseMessage([]byte(deepMultipart(maxDepth+1, "")), false, fixedClock)
	require.ErrorIs(t, err, errLimit)
	assert.Contains(t, err.Error(), "nested deeper than 32 levels")

	_, err = parseMessage([]byte(deepMultipart(16000, "")), false, fixedClock)
	require.ErrorIs(t, err, errLimit)

	m, err = parseMessage([]byte(manyParts(maxParts-1)), false, fixedClock)
	require.NoError(t, err, "as many parts as allowed")
	assert.Equal(t, maxParts-1, m.AttachmentCount)
	_, err = parseMessage([]byte(manyParts(maxParts)), false, fixedClock)
	require.ErrorIs(t, err, errLimit)
	assert.Contains(t, err.Error(), "more than 1000 MIME parts")
}

// A clock that moves a second per reading: the budget runs out part way through a
// message of many parts, whatever the machine's speed.
func TestParseDeadline(t *testing.T) {
	now := testNow
	tick := func() time.Time {
		now = now.Add(time.Second)
		return now
	}
	_, err := parseMessage([]byte(manyParts(20)), false, tick)
	require.ErrorIs(t, err, errLimit)
	assert.Contains(t, err.Error(), "not read within 5s")
}

func TestHTMLConversionFailureStripsTags(t *testing.T) {
	html := `<html><head><style>p{}</style></head><body><p>Ship it, the <b>caf&eacute;</b> build is green.</p></body></html>`
	spent := &budget{now: fixedClock, expired: true} // conversion fails at its first read
	m := &message{}
	m.finishText(bodyText{html: html, haveHTML: true}, spent)
	assert.True(t, m.FromHTML)
	assert.NotContains(t, m.Text, "<")
	assert.Contains(t, m.Text, "Ship it, the café build is green.")
	require.Len(t, m.Notes.List, 1)
	assert.Contains(t, m.Notes.List[0], "html conversion failed")
}

func TestPayloadListsBounded(t *testing.T) {
	var to []string
	for i := range 200 {
		to = append(to, fmt.Sprintf("r%d@example.com", i))
	}
	var refs []string
	for i := range 120 {
		refs = append(refs, fmt.Sprintf("<ref%d@example.com>", i))
	}
	raw := manyParts(80)
	raw = strings.Replace(raw, "Subject: parts\r\n", "Subject: parts\r\nTo: "+strings.Join(to, ", ")+"\r\nCc: "+
		strings.Join(to, ", ")+"\r\nReferences: "+strings.Join(refs, " ")+"\r\n", 1)
	m, it := mapRaw(t, testMapConfig(), raw)
	assert.Equal(t, 80, m.AttachmentCount)
	assert.Len(t, m.Attachments, maxListed)
	assert.True(t, strings.HasSuffix(it.Summary, "(80 attachments)"), it.Summary)
	assert.Equal(t, "ref0@example.com", it.CoalesceKey)

	var p map[string]any
	require.NoError(t, json.Unmarshal(it.Payload, &p))
	for key, total := range map[string]float64{"to": 200, "cc": 200, "references": 120, "attachments": 80} {
		assert.Len(t, p[key], maxListed, key)
		assert.Equal(t, total, p[key+"_total"], key)
	}
	assert.NotContains(t, p, "in_reply_to_total")
}

// Replay reads a stored poison message the same way: an error, never a hang.
func TestItemsOverLimit(t *testing.T) {
	_, err := Items(testMapConfig(), &inbox.Event{Connector: "support", Body: []byte(deepMultipart(16000, ""))})
	require.Error(t, err)
	assert.True(t, errors.Is(err, errLimit), err)
}
