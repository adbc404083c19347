package slack

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/slack/webapitest"
)

// The sender's DM and mention, signed as Slack signs them, are verified and read as a
// DM and a mention of the connector's bot, each delivery a new event; another signing
// secret is refused; a Socket Mode connector without one has nothing to post to.
func TestSenderSamples(t *testing.T) {
	h := newHarness(t, testConfig(), harnessOpts{})
	snd, err := NewSender(testConfig(), connectors.SenderOptions{})
	require.NoError(t, err)
	post := func(name string) *httptest.ResponseRecorder {
		s, err := snd.Sample(name, h.clock.Now())
		require.NoError(t, err)
		hdr, err := snd.Sign(s, "", h.clock.Now())
		require.NoError(t, err)
		assert.Equal(t, webapitest.Sign(testSecret, h.clock.Now().Unix(), s.Body), hdr.Get(HeaderSignature), "signed as Slack signs")
		req := httptest.NewRequest(http.MethodPost, "/webhooks/slack/acme", bytes.NewReader(s.Body))
		req.Header = hdr
		return h.do(req)
	}
	for _, c := range []struct{ sample, kind string }{{"", KindDM}, {"dm", KindDM}, {"mention", KindMention}} {
		rec := post(c.sample)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		call := h.lastCall()
		require.Len(t, call.Notifications, 1, call.Event.Error)
		assert.Equal(t, c.kind, call.Notifications[0].Kind, c.sample)
	}
	_, err = snd.Sample("reaction", h.clock.Now())
	require.ErrorContains(t, err, `no such sample "reaction" (have dm, mention)`)

	other, err := NewSender(Config{Name: "acme", SigningSecret: "another-signing-secret-0123"}, connectors.SenderOptions{})
	require.NoError(t, err)
	s, err := other.Sample("dm", h.clock.Now())
	require.NoError(t, err)
	hdr, err := other.Sign(s, "", h.clock.Now())
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, "/webhooks/slack/acme", bytes.NewReader(s.Body))
	req.Header = hdr
	assert.Equal(t, http.StatusUnauthorized, h.do(req).Code)

	_, err = NewSender(Config{Name: "sock", SocketMode: true, AppToken: "xapp-1"}, connectors.SenderOptions{})
	require.ErrorContains(t, err, "Socket Mode")
}
