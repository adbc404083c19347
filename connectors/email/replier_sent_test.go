package email

import (
	"context"
	"testing"

	"github.com/emersion/go-imap/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReplierSentFolder: a sent reply is copied to the Sent folder, where Find
// finds it by its Message-ID, and only it.
func TestReplierSentFolder(t *testing.T) {
	box := newSMTPBox(t)
	imapSrv := newMemIMAP(t)
	require.NoError(t, imapSrv.user.Create("Sent", nil))
	cfg := replyConfig(box.addr)
	cfg.Addr, cfg.Username = imapSrv.addr, testUser
	cfg.SMTP.From = "support@example.com"
	cfg.SentFolder = "Sent"
	r := newTestReplier(cfg)
	ctx := context.Background()

	rp := testReply("r1")
	_, found, err := r.Find(ctx, rp)
	require.NoError(t, err)
	assert.False(t, found, "not sent yet")

	sent, _, err := r.Send(ctx, rp)
	require.NoError(t, err)
	got, found, err := r.Find(ctx, rp)
	require.NoError(t, err)
	assert.True(t, found)
	assert.Equal(t, sent, got)
	_, found, err = r.Find(ctx, testReply("r2"))
	require.NoError(t, err)
	assert.False(t, found, "another reply is not found")

	c := imapSrv.client()
	fl := flags(t, c, "Sent")
	require.Len(t, fl, 1, "one copy")
	for _, f := range fl {
		assert.Contains(t, f, imap.FlagSeen)
	}

	// append_sent: false (the provider files submitted mail itself): no copy, and
	// Find still looks there.
	off := false
	cfg.AppendSent = &off
	r = newTestReplier(cfg)
	_, _, err = r.Send(ctx, testReply("r3"))
	require.NoError(t, err)
	assert.Len(t, flags(t, c, "Sent"), 1)
	_, found, err = r.Find(ctx, rp)
	require.NoError(t, err)
	assert.True(t, found)

	// A Sent folder that is not there is an error, not "not found" (which would
	// send again).
	cfg.SentFolder = "Missing"
	_, found, err = newTestReplier(cfg).Find(ctx, rp)
	require.Error(t, err)
	assert.False(t, found)
	assert.Contains(t, err.Error(), `select "Missing"`)
	assert.Len(t, box.all(), 2)
}

// TestReplierWithoutSentFolder: without sent_folder there is nowhere to look;
// Find says not found without error, so the service sends again.
func TestReplierWithoutSentFolder(t *testing.T) {
	r := newTestReplier(replyConfig("127.0.0.1:1"))
	_, found, err := r.Find(context.Background(), testReply("r1"))
	require.NoError(t, err)
	assert.False(t, found)
}

// TestReplierCopyFailureStillSent: the reply went out; a Sent folder that refuses
// the copy does not make it fail (a retry would send it twice).
func TestReplierCopyFailureStillSent(t *testing.T) {
	box := newSMTPBox(t)
	imapSrv := newMemIMAP(t)
	cfg := replyConfig(box.addr)
	cfg.Addr, cfg.Username = imapSrv.addr, testUser
	cfg.SMTP.From = "support@example.com"
	cfg.SentFolder = "Missing"
	sent, retry, err := newTestReplier(cfg).Send(context.Background(), testReply("r1"))
	require.NoError(t, err)
	assert.False(t, retry)
	assert.NotEmpty(t, sent.PlatformID)
	assert.Len(t, box.all(), 1)
}
