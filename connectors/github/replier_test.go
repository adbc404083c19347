package github

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/secret"
)

func replyConfig(f *fakeGitHub) Config {
	c := testConfig()
	c.Token = "ghp_test-token"
	c.APIURL = f.URL()
	return c
}

func newTestReplier(t *testing.T, cfgs ...Config) *Replier {
	t.Helper()
	r, err := NewReplier(cfgs, fixedNow)
	require.NoError(t, err)
	return r
}

func issueReply(id, text string) reply.Reply {
	return reply.Reply{ID: id, Text: text, CreatedAt: time.Now(),
		To: reply.NewTo("github", "acme", Place{Repo: "octo-org/hello", Number: 7})}
}

func TestReplierPostsIssueCommentWithMarker(t *testing.T) {
	f := newFakeGitHub(t)
	r := newTestReplier(t, replyConfig(f))
	sent, retry, err := r.Send(context.Background(), issueReply("r-1", "Fixed in **#8**."))
	require.NoError(t, err)
	assert.False(t, retry)

	cs := f.issueComments("octo-org/hello#7")
	require.Len(t, cs, 1)
	assert.Equal(t, "Fixed in **#8**.\n\n<!-- signalgate:reply:r-1 -->", cs[0]["body"])
	assert.Equal(t, fmt.Sprint(cs[0]["id"]), sent.PlatformID)
	assert.Equal(t, "https://github.com/octo-org/hello/issues/7#issuecomment-"+sent.PlatformID, sent.URL)
	assert.Equal(t, []string{"POST /repos/octo-org/hello/issues/7/comments"}, f.log())
}

func TestReplierRepliesInReviewThread(t *testing.T) {
	f := newFakeGitHub(t)
	root := f.addReviewComment("octo-org/hello#7", "alice", "Why a map here?", time.Now())
	r := newTestReplier(t, replyConfig(f))
	rp := issueReply("r-2", "Lookups by id; a slice would be O(n).")
	editPlace(&rp.To, func(p *Place) { p.ReviewCommentID = root })
	sent, _, err := r.Send(context.Background(), rp)
	require.NoError(t, err)

	cs := f.reviewComments("octo-org/hello#7")
	require.Len(t, cs, 2)
	assert.Equal(t, strconv.FormatInt(root, 10), fmt.Sprint(cs[1]["in_reply_to_id"]), "the answer is in the review thread")
	assert.Equal(t, sent.PlatformID, fmt.Sprint(cs[1]["id"]))
	assert.Empty(t, f.issueComments("octo-org/hello#7"), "not a top-level comment")

	found, ok, err := r.Find(context.Background(), rp)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sent, found)
}

// After a crash between GitHub's answer and recording it, Find sees the posted reply
// on the last page of a long issue, reading the newest page first.
func TestReplierFindsMarkerOnNewestPageFirst(t *testing.T) {
	f := newFakeGitHub(t)
	created := time.Now().Add(-time.Minute)
	for i := range 250 {
		f.addIssueComment("octo-org/hello#7", "alice", fmt.Sprintf("comment %d", i), created)
	}
	r := newTestReplier(t, replyConfig(f))
	rp := issueReply("r-3", "Done.")
	sent, _, err := r.Send(context.Background(), rp)
	require.NoError(t, err)

	before := len(f.log())
	found, ok, err := r.Find(context.Background(), rp)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sent, found)
	pages := f.log()[before:]
	require.Len(t, pages, 2, "page 1 for the page count, then the last page, where the reply is")
	assert.Contains(t, pages[1], "page=3")

	_, ok, err = r.Find(context.Background(), issueReply("r-never-sent", "x"))
	require.NoError(t, err)
	assert.False(t, ok)
}

// Someone else quoting a queued reply's marker must not stop the reply from being
// posted: with bot_login set, only the bot's own comment counts.
func TestReplierFindIgnoresMarkerFromOthers(t *testing.T) {
	f := newFakeGitHub(t)
	f.addIssueComment("octo-org/hello#7", "mallory", "nothing to see <!-- signalgate:reply:r-4 -->", time.Now())
	r := newTestReplier(t, replyConfig(f)) // bot_login octocat
	_, ok, err := r.Find(context.Background(), issueReply("r-4", "x"))
	require.NoError(t, err)
	assert.False(t, ok)

	f.addIssueComment("octo-org/hello#7", "octocat", "x\n\n<!-- signalgate:reply:r-4 -->", time.Now())
	_, ok, err = r.Find(context.Background(), issueReply("r-4", "x"))
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestReplierRateLimitsRetryAfterGitHubsWait(t *testing.T) {
	secondary := `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	for _, tc := range []struct {
		name string
		c    canned
		wait time.Duration
	}{
		{"secondary with Retry-After", canned{403, map[string]string{"Retry-After": "37"}, secondary}, 37 * time.Second},
		{"secondary without a wait", canned{403, nil, secondary}, time.Minute},
		{"429 Retry-After", canned{429, map[string]string{"Retry-After": "12"}, `{"message":"too many"}`}, 12 * time.Second},
		{"primary", canned{403, map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0",
			"X-RateLimit-Reset": strconv.FormatInt(fixedNow().Add(2*time.Minute).Unix(), 10)},
			`{"message":"API rate limit exceeded"}`}, 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			f.failNext(tc.c)
			_, retry, err := newTestReplier(t, replyConfig(f)).Send(context.Background(), issueReply("r-5", "hi"))
			require.Error(t, err)
			assert.True(t, retry)
			ra, ok := errors.AsType[*reply.RetryAfter](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tc.wait, ra.Wait)
			assert.Empty(t, f.issueComments("octo-org/hello#7"))
		})
	}
}

func TestReplierPermanentAndTransientErrors(t *testing.T) {
	for _, tc := range []struct {
		c     canned
		retry bool
		says  string
	}{
		{canned{403, nil, `{"message":"Resource not accessible by personal access token"}`}, false, "403: Resource not accessible"},
		{canned{404, nil, `{"message":"Not Found"}`}, false, "404: Not Found"},
		{canned{410, nil, `{"message":"Issues are disabled for this repo"}`}, false, "410"},
		{canned{422, nil, `{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"unprocessable","field":"data","message":"Could not resolve to a node"}]}`}, false, "Could not resolve to a node"},
		{canned{502, nil, `{"message":"Server Error"}`}, true, "502"},
	} {
		t.Run(strconv.Itoa(tc.c.status), func(t *testing.T) {
			f := newFakeGitHub(t)
			f.failNext(tc.c)
			_, retry, err := newTestReplier(t, replyConfig(f)).Send(context.Background(), issueReply("r-6", "hi"))
			require.Error(t, err)
			assert.Equal(t, tc.retry, retry)
			assert.Contains(t, err.Error(), tc.says)
			assert.NotContains(t, err.Error(), "ghp_test-token")
		})
	}
}

func TestReplierCheck(t *testing.T) {
	f := newFakeGitHub(t)
	noCreds := testConfig()
	noCreds.Name = "readonly"
	r := newTestReplier(t, replyConfig(f), noCreds)
	to := issueReply("x", "").To
	require.NoError(t, r.Check(to, "fine"))

	bad := func(mut func(*reply.To)) reply.To { c := to; mut(&c); return c }
	for name, tc := range map[string]struct {
		to   reply.To
		want error
	}{
		"unknown connector": {bad(func(t *reply.To) { t.Connector = "nope" }), reply.ErrUnknownPlace},
		"other source":      {bad(func(t *reply.To) { t.Source = "slack" }), reply.ErrUnknownPlace},
		"repo not o/n":      {bad(func(t *reply.To) { editPlace(t, func(p *Place) { p.Repo = "hello" }) }), reply.ErrUnknownPlace},
		"repo with a path":  {bad(func(t *reply.To) { editPlace(t, func(p *Place) { p.Repo = "o/r/../../x" }) }), reply.ErrUnknownPlace},
		"no number":         {bad(func(t *reply.To) { editPlace(t, func(p *Place) { p.Number = 0 }) }), reply.ErrUnknownPlace},
		"no credentials":    {bad(func(t *reply.To) { t.Connector = "readonly" }), reply.ErrNoCredentials},
	} {
		err := r.Check(tc.to, "hi")
		require.ErrorIs(t, err, tc.want, name)
	}
	err := r.Check(bad(func(t *reply.To) { t.Connector = "readonly" }), "hi")
	assert.Contains(t, err.Error(), "token")

	// The limit counts the marker: the longest text with the longest id still fits.
	long := strings.Repeat("é", MaxReplyChars)
	require.ErrorIs(t, r.Check(to, long+"x"), reply.ErrTooLong)
	require.NoError(t, r.Check(to, long))
	rp := issueReply(strings.Repeat("i", MaxReplyIDChars), long)
	_, _, err = r.Send(context.Background(), rp)
	require.NoError(t, err, "GitHub takes the longest accepted text")

	_, retry, err := r.Send(context.Background(), issueReply("r-7", long+"x"))
	require.ErrorIs(t, err, reply.ErrTooLong)
	assert.False(t, retry)
	_, retry, err = r.Send(context.Background(), issueReply("a-->b", "hi"))
	require.Error(t, err, "an id that would end the hidden comment")
	assert.False(t, retry)
	assert.Len(t, f.issueComments("octo-org/hello#7"), 1)
}

// Without bot_login, anyone who writes a reply's marker in a comment must not stop the
// reply: only a comment by the token's own user (GET /user, asked once) counts.
func TestReplierFindTrustsOnlyTheTokensUser(t *testing.T) {
	f := newFakeGitHub(t)
	f.login = "signalgate-bot" // the token's user, as GET /user names it
	cfg := replyConfig(f)
	cfg.BotLogin = ""
	r := newTestReplier(t, cfg)
	f.addIssueComment("octo-org/hello#7", "mallory", "stop it <!-- signalgate:reply:r-11 -->", time.Now())
	rp := issueReply("r-11", "x")
	_, ok, err := r.Find(context.Background(), rp)
	require.NoError(t, err)
	assert.False(t, ok, "mallory's marker is not the reply")

	sent, _, err := r.Send(context.Background(), rp)
	require.NoError(t, err)
	found, ok, err := r.Find(context.Background(), rp)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sent, found)
	users := 0
	for _, l := range f.log() {
		if l == "GET /user" {
			users++
		}
	}
	assert.Equal(t, 1, users, "the account is asked once per connector")

	// GET /user failing: Find fails (the service retries), it does not guess.
	r = newTestReplier(t, cfg)
	f.failNext(canned{status: http.StatusUnauthorized, body: `{"message":"Bad credentials"}`})
	_, _, err = r.Find(context.Background(), rp)
	require.ErrorContains(t, err, "GET /user")
}

// A GitHub App's replies are found only among its bot's comments, "<slug>[bot]" as GET
// /app (with the App's JWT) names it; a marker in anyone else's comment does not count.
func TestReplierFindTrustsOnlyTheAppsBot(t *testing.T) {
	f := newFakeGitHub(t)
	key, pemKey := testAppKey(t)
	f.appID, f.appKey, f.auth, f.appSlug, f.login = 4242, &key.PublicKey, "", "signalgate-app", "signalgate-app[bot]"
	cfg := testConfig()
	cfg.BotLogin = ""
	cfg.APIURL = f.URL()
	cfg.App = &AppConfig{ID: 4242, PrivateKey: secretOf(pemKey), InstallationID: 99}
	require.NoError(t, cfg.Validate())
	r := newTestReplier(t, cfg)
	rp := issueReply("r-12", "as the app")
	f.addIssueComment("octo-org/hello#7", "mallory", "<!-- signalgate:reply:r-12 -->", time.Now())
	f.addIssueComment("octo-org/hello#7", "other-app[bot]", "<!-- signalgate:reply:r-12 -->", time.Now())
	_, ok, err := r.Find(context.Background(), rp)
	require.NoError(t, err)
	assert.False(t, ok)

	sent, _, err := r.Send(context.Background(), rp)
	require.NoError(t, err)
	found, ok, err := r.Find(context.Background(), rp)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, sent, found)
	apps := 0
	for _, l := range f.log() {
		if l == "GET /app" {
			apps++
		}
	}
	assert.Equal(t, 1, apps, "the App is asked once per connector")
}

func testAppKey(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	return k, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// A GitHub App posts with an installation token fetched with the App's JWT.
func TestReplierPostsAsAppInstallation(t *testing.T) {
	f := newFakeGitHub(t)
	key, pemKey := testAppKey(t)
	f.appID, f.appKey, f.auth = 4242, &key.PublicKey, "" // auth: set by the token the fake issues
	cfg := testConfig()
	cfg.APIURL = f.URL()
	cfg.App = &AppConfig{ID: 4242, PrivateKey: secretOf(pemKey), InstallationID: 99}
	require.NoError(t, cfg.Validate())
	r := newTestReplier(t, cfg)
	for _, id := range []string{"r-8", "r-9"} {
		_, _, err := r.Send(context.Background(), issueReply(id, "as the app"))
		require.NoError(t, err)
	}
	assert.Equal(t, []string{
		"POST /app/installations/99/access_tokens",
		"POST /repos/octo-org/hello/issues/7/comments",
		"POST /repos/octo-org/hello/issues/7/comments",
	}, f.log(), "one token for both")

	// A wrong key: GitHub refuses the JWT; permanent until the config changes.
	other, otherPEM := testAppKey(t)
	_ = other
	cfg.App.PrivateKey = secretOf(otherPEM)
	_, retry, err := newTestReplier(t, cfg).Send(context.Background(), issueReply("r-10", "x"))
	require.Error(t, err)
	assert.False(t, retry)
	assert.Contains(t, err.Error(), "401")
	assert.NotContains(t, err.Error(), "PRIVATE KEY")
}

func secretOf(s string) secret.Secret { return secret.Secret(s) }

// Careless reply credentials are refused at startup, naming the key, never echoing it.
func TestConfigReplyCredentials(t *testing.T) {
	_, pemKey := testAppKey(t)
	for _, tc := range []struct {
		name string
		mut  func(*Config)
		says []string
	}{
		{"token and app", func(c *Config) {
			c.Token, c.App = "ghp_x", &AppConfig{ID: 1, InstallationID: 2, PrivateKey: secretOf(pemKey)}
		}, []string{"token, app: set one of them"}},
		{"app without fields", func(c *Config) { c.App = &AppConfig{} },
			[]string{"app.id: required", "app.installation_id: required", "app.private_key: required"}},
		{"app key not PEM", func(c *Config) { c.App = &AppConfig{ID: 1, InstallationID: 2, PrivateKey: "SENTINEL-not-a-key"} },
			[]string{"app.private_key: not a PEM block"}},
		{"app key not RSA", func(c *Config) {
			c.App = &AppConfig{ID: 1, InstallationID: 2, PrivateKey: secretOf("-----BEGIN PRIVATE KEY-----\nU0VOVElORUw=\n-----END PRIVATE KEY-----\n")}
		}, []string{"app.private_key: not an RSA private key"}},
		{"api_url", func(c *Config) { c.APIURL = "ghe.example.com/api/v3" }, []string{"api_url: want an http(s) URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig()
			tc.mut(&c)
			err := c.Validate()
			require.Error(t, err)
			for _, s := range tc.says {
				assert.Contains(t, err.Error(), s)
			}
			assert.NotContains(t, err.Error(), "SENTINEL")
			assert.NotContains(t, err.Error(), "PRIVATE KEY")
		})
	}
	c := testConfig()
	c.App = &AppConfig{ID: 1, InstallationID: 2, PrivateKey: secretOf(pemKey)}
	require.NoError(t, c.Validate())
	c.App, c.Token = nil, "ghp_x"
	require.NoError(t, c.Validate())
}
