package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bradleyfalzon/ghinstallation/v2"
	gh "github.com/google/go-github/v62/github"

	"github.com/signalgate/signalgate/reply"
)

// MaxCommentChars is GitHub's limit on a comment body; the hidden marker counts.
const MaxCommentChars = 65536

// MaxReplyIDChars bounds the reply id Check reserves room for in the body: Check runs
// before the id is known to it, and Send must never find the body over the limit.
const MaxReplyIDChars = 128

// markerPrefix and markerSuffix enclose a reply's id in the hidden marker every reply
// carries, so a crash between GitHub's answer and recording it never posts twice.
const (
	markerPrefix = "<!-- signalgate:reply:"
	markerSuffix = " -->"
)

// MaxReplyChars is the longest text Check accepts (counted with any marker in it
// neutralised, as it is posted): GitHub's limit less the marker.
const MaxReplyChars = MaxCommentChars - len("\n\n"+markerPrefix+markerSuffix) - MaxReplyIDChars

// findSkew is how far before a reply's creation Find looks, for clocks that disagree.
const findSkew = time.Hour

// defaultRateWait is GitHub's advice when a secondary rate limit names no wait.
const defaultRateWait = time.Minute

// Replier posts replies as issue or pull request comments, or as replies in a review
// thread, through each connector's token or App installation. It implements
// reply.Sender.
type Replier struct {
	conns map[string]replyConn
	now   func() time.Time
}

var _ reply.Sender = (*Replier)(nil)

type replyConn struct {
	cfg    Config
	client *gh.Client // nil: the connector has no credentials for replies
	// app is authenticated as the App itself (its JWT), which GET /app needs; nil for a
	// token.
	app *gh.Client
	who *poster
}

// poster caches the login a connector's replies are posted under (once known). turn
// lets one lookup run at a time while others wait only as long as their context allows
// (a webhook delivery must not outwait GitHub's timeout behind a slow lookup).
type poster struct {
	turn  chan struct{}
	login string // guarded by turn
}

func newPoster() *poster { return &poster{turn: make(chan struct{}, 1)} }

// NewReplier builds a client per connector with a token or an App installation.
func NewReplier(cfgs []Config, now func() time.Time) (*Replier, error) {
	if now == nil {
		now = time.Now
	}
	r := &Replier{conns: make(map[string]replyConn, len(cfgs)), now: now}
	for _, c := range cfgs {
		rc, err := newReplyConn(c.WithDefaults())
		if err != nil {
			return nil, err
		}
		r.conns[c.Name] = rc
	}
	return r, nil
}

// newReplyConn builds c's clients: a token's, or an App installation's and the App's
// own; none when c has no credentials for replies.
func newReplyConn(c Config) (replyConn, error) {
	base, err := url.Parse(c.APIURL)
	if err != nil {
		return replyConn{}, fmt.Errorf("connectors.github[%s].api_url: %w", c.Name, err)
	}
	rc := replyConn{cfg: c, who: newPoster()}
	switch {
	case c.App != nil:
		itr, err := ghinstallation.New(http.DefaultTransport, c.App.ID, c.App.InstallationID, []byte(c.App.PrivateKey.Reveal()))
		if err != nil {
			// The library's message may quote the key's parse failure, never the key.
			return replyConn{}, fmt.Errorf("connectors.github[%s].app.private_key: not a usable RSA key", c.Name)
		}
		itr.BaseURL = strings.TrimSuffix(c.APIURL, "/")
		rc.client = gh.NewClient(&http.Client{Transport: itr, Timeout: 30 * time.Second})
		atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, c.App.ID, []byte(c.App.PrivateKey.Reveal()))
		if err != nil {
			return replyConn{}, fmt.Errorf("connectors.github[%s].app.private_key: not a usable RSA key", c.Name)
		}
		atr.BaseURL = itr.BaseURL
		rc.app = gh.NewClient(&http.Client{Transport: atr, Timeout: 30 * time.Second})
		rc.app.BaseURL = base
	case c.Token != "":
		rc.client = gh.NewClient(&http.Client{Timeout: 30 * time.Second}).WithAuthToken(c.Token.Reveal())
	}
	if rc.client != nil {
		rc.client.BaseURL = base
	}
	return rc, nil
}

// Check refuses what can never be posted: an unknown connector or place, a connector
// without credentials, text over GitHub's limit (counted as posted: markers in it
// neutralised).
func (r *Replier) Check(to reply.To, text string) error {
	_, _, _, _, err := r.place(to)
	if err != nil {
		return err
	}
	if n := utf8.RuneCountInString(reply.NeutralizeMarkers(text)); n > MaxReplyChars {
		return fmt.Errorf("%w: %d characters, GitHub takes %d (%d with the hidden marker)",
			reply.ErrTooLong, n, MaxReplyChars, MaxCommentChars)
	}
	return nil
}

// place resolves a To to its connector's client, its place and the repository's owner
// and name.
func (r *Replier) place(to reply.To) (c replyConn, p Place, owner, name string, err error) {
	if to.Source != Source {
		return c, p, "", "", fmt.Errorf("%w: source %q is not github", reply.ErrUnknownPlace, to.Source)
	}
	c, ok := r.conns[to.Connector]
	if !ok {
		return c, p, "", "", fmt.Errorf("%w: no github connector named %q", reply.ErrUnknownPlace, to.Connector)
	}
	if p, err = reply.PlaceOf[Place](to); err != nil {
		return c, p, "", "", fmt.Errorf("%w: %w", reply.ErrUnknownPlace, err)
	}
	owner, name, ok = strings.Cut(p.Repo, "/")
	if !ok || owner == "" || name == "" || strings.ContainsAny(name, "/?#") || strings.ContainsAny(owner, "?#") {
		return c, p, "", "", fmt.Errorf("%w: repo %q is not owner/name", reply.ErrUnknownPlace, p.Repo)
	}
	if p.Number <= 0 {
		return c, p, "", "", fmt.Errorf("%w: number must be an issue or pull request number", reply.ErrUnknownPlace)
	}
	if p.ReviewCommentID < 0 {
		return c, p, "", "", fmt.Errorf("%w: reviewCommentId must be positive", reply.ErrUnknownPlace)
	}
	if c.client == nil {
		return c, p, "", "", fmt.Errorf("%w: connectors.github[] %q needs token or app (id, private_key, installation_id)",
			reply.ErrNoCredentials, to.Connector)
	}
	return c, p, owner, name, nil
}

// marker is the hidden line that finds a reply again after a crash. Only ids the outbox
// accepts are carried: none can hold a space, "<" or ">", so no marker ends with another.
func marker(id string) (string, error) {
	if !reply.ValidID(id) || len(id) > MaxReplyIDChars {
		return "", fmt.Errorf("reply id %q cannot be carried in a GitHub comment's hidden marker", id)
	}
	return markerPrefix + id + markerSuffix, nil
}

// markedID is the id of the marker a comment's body ends with, where the gateway puts
// it (after the reply's text, in which any marker was neutralised); ok is false when the
// body does not end with one. A marker anywhere else in a body is quoted text.
func markedID(body string) (id string, ok bool) {
	rest, ok := strings.CutSuffix(strings.TrimRight(body, " \t\r\n"), markerSuffix)
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, markerPrefix)
	if i < 0 {
		return "", false
	}
	id = rest[i+len(markerPrefix):]
	if !reply.ValidID(id) || len(id) > MaxReplyIDChars {
		return "", false
	}
	return id, true
}

// Send posts r with its marker: a reply in the review thread when r.To names a review
// comment, else a comment on the issue or pull request.
func (r *Replier) Send(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	if err := r.Check(rp.To, rp.Text); err != nil {
		return reply.Sent{}, false, err
	}
	c, p, owner, name, _ := r.place(rp.To)
	mark, err := marker(rp.ID)
	if err != nil {
		return reply.Sent{}, false, err
	}
	// Markers in the text are neutralised: the body's only marker is the one it ends with.
	body := reply.NeutralizeMarkers(rp.Text) + "\n\n" + mark
	if p.ReviewCommentID > 0 {
		// The documented replies endpoint: POST …/pulls/{n}/comments with in_reply_to
		// (go-github's CreateCommentInReplyTo) is described as requiring commit_id and path.
		u := fmt.Sprintf("repos/%s/%s/pulls/%d/comments/%d/replies", url.PathEscape(owner), url.PathEscape(name),
			p.Number, p.ReviewCommentID)
		req, err := c.client.NewRequest(http.MethodPost, u, &gh.PullRequestComment{Body: &body})
		if err != nil {
			return reply.Sent{}, false, fmt.Errorf("build review reply request: %w", err)
		}
		out := new(gh.PullRequestComment)
		if _, err := c.client.Do(ctx, req, out); err != nil {
			retry, err := r.classify(err, "reply in review thread")
			return reply.Sent{}, retry, err
		}
		return reply.Sent{PlatformID: strconv.FormatInt(out.GetID(), 10), URL: out.GetHTMLURL()}, false, nil
	}
	out, _, err := c.client.Issues.CreateComment(ctx, owner, name, p.Number, &gh.IssueComment{Body: &body})
	if err != nil {
		retry, err := r.classify(err, "comment")
		return reply.Sent{}, retry, err
	}
	return reply.Sent{PlatformID: strconv.FormatInt(out.GetID(), 10), URL: out.GetHTMLURL()}, false, nil
}

// classify says whether a failed post may succeed later, carrying GitHub's wait when
// it named one. The error never holds the token or the body.
func (r *Replier) classify(err error, doing string) (bool, error) {
	if abuse, ok := errors.AsType[*gh.AbuseRateLimitError](err); ok {
		wait := defaultRateWait
		if abuse.RetryAfter != nil && *abuse.RetryAfter > 0 {
			wait = *abuse.RetryAfter
		}
		return true, &reply.RetryAfter{Wait: wait, Err: fmt.Errorf("%s: github secondary rate limit: %s", doing, abuse.Message)}
	}
	if rl, ok := errors.AsType[*gh.RateLimitError](err); ok {
		wait := rl.Rate.Reset.Sub(r.now())
		if wait < time.Second {
			wait = time.Second
		}
		return true, &reply.RetryAfter{Wait: wait, Err: fmt.Errorf("%s: github rate limit: %s", doing, rl.Message)}
	}
	if er, ok := errors.AsType[*gh.ErrorResponse](err); ok && er.Response != nil {
		code := er.Response.StatusCode
		msg := fmt.Errorf("%s: github answered %d: %s", doing, code, ghMessage(er))
		switch {
		case code == http.StatusTooManyRequests:
			wait := defaultRateWait
			if s, err := strconv.Atoi(er.Response.Header.Get("Retry-After")); err == nil && s > 0 {
				wait = time.Duration(s) * time.Second
			}
			return true, &reply.RetryAfter{Wait: wait, Err: msg}
		case code >= 500 || code == http.StatusRequestTimeout:
			return true, msg
		}
		// 401, 403, 404, 410, 422…: the same request will be refused again.
		return false, msg
	}
	if te, ok := errors.AsType[*ghinstallation.HTTPError](err); ok && te.Response != nil {
		code := te.Response.StatusCode
		return code >= 500 || code == http.StatusTooManyRequests,
			fmt.Errorf("%s: github refused the App installation token: %d %s", doing, code, http.StatusText(code))
	}
	// Network failures, timeouts, a cancelled context: nothing says GitHub refused.
	return true, fmt.Errorf("%s: %w", doing, redactURL(err))
}

// ghMessage is GitHub's message and its validation errors' messages.
func ghMessage(er *gh.ErrorResponse) string {
	parts := []string{er.Message}
	for _, e := range er.Errors {
		if e.Message != "" {
			parts = append(parts, e.Message)
		} else if e.Code != "" {
			parts = append(parts, e.Field+" "+e.Code)
		}
	}
	return strings.Join(parts, "; ")
}

// redactURL drops the request URL's query from a transport error (it never holds the
// token, which travels in a header, but it is noise in a reply's last error).
func redactURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return fmt.Errorf("%s %s: %w", ue.Op, strings.SplitN(ue.URL, "?", 2)[0], ue.Err)
	}
	return err
}

// Find looks for r's marker among the comments posted since r was created: the issue's
// (newest page first) or the pull request's review comments (newest first). A comment
// is r only when its body ends with r's marker and its author is the account replies
// are posted as: neither anyone else's comment nor another reply quoting r's marker may
// stop r from being posted.
func (r *Replier) Find(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, p, owner, name, err := r.place(rp.To)
	if err != nil {
		return reply.Sent{}, false, err
	}
	if _, err := marker(rp.ID); err != nil {
		return reply.Sent{}, false, err
	}
	// Only a comment by the account the replies are posted as counts: anyone else
	// writing a reply's marker must not stop the reply from being posted.
	login, err := c.login(ctx)
	if err != nil {
		return reply.Sent{}, false, err
	}
	var since time.Time
	if !rp.CreatedAt.IsZero() {
		since = rp.CreatedAt.Add(-findSkew)
	}
	ours := func(body string, user *gh.User) bool {
		id, marked := markedID(body)
		return marked && id == rp.ID && user.GetLogin() != "" && botName(user.GetLogin()) == botName(login)
	}
	if p.ReviewCommentID > 0 {
		return findReviewReply(ctx, c.client, owner, name, p.Number, since, ours)
	}
	return findIssueComment(ctx, c.client, owner, name, p.Number, since, ours)
}

// login is the account c posts replies as: bot_login when set, else the token's user
// (GET /user) or the App's bot, "<slug>[bot]" (GET /app), asked once and kept.
func (c replyConn) login(ctx context.Context) (string, error) {
	if c.cfg.BotLogin != "" {
		return c.cfg.BotLogin, nil
	}
	select {
	case c.who.turn <- struct{}{}:
	case <-ctx.Done():
		return "", fmt.Errorf("wait for the lookup of the account replies are posted as: %w", ctx.Err())
	}
	defer func() { <-c.who.turn }()
	if c.who.login != "" {
		return c.who.login, nil
	}
	var login string
	if c.app != nil {
		app, _, err := c.app.Apps.Get(ctx, "")
		if err != nil {
			return "", fmt.Errorf("read the App replies are posted as (GET /app): %w", redactURL(err))
		}
		if app.GetSlug() != "" {
			login = app.GetSlug() + "[bot]"
		}
	} else {
		u, _, err := c.client.Users.Get(ctx, "")
		if err != nil {
			return "", fmt.Errorf("read the account replies are posted as (GET /user): %w", redactURL(err))
		}
		login = u.GetLogin()
	}
	if login == "" {
		return "", errors.New("GitHub named no account for the connector's credentials, so its replies cannot be told from others'")
	}
	c.who.login = login
	return login, nil
}

func findIssueComment(ctx context.Context, client *gh.Client, owner, name string, number int, since time.Time,
	ours func(string, *gh.User) bool) (reply.Sent, bool, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	if !since.IsZero() {
		opts.Since = &since
	}
	list := func(page int) ([]*gh.IssueComment, *gh.Response, error) {
		opts.Page = page
		cs, resp, err := client.Issues.ListComments(ctx, owner, name, number, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("list comments of %s/%s#%d: %w", owner, name, number, redactURL(err))
		}
		return cs, resp, nil
	}
	first, resp, err := list(1)
	if err != nil {
		return reply.Sent{}, false, err
	}
	// Issue comments come oldest first: the reply, recent, is on the last pages.
	for page := resp.LastPage; page > 1; page-- {
		cs, _, err := list(page)
		if err != nil {
			return reply.Sent{}, false, err
		}
		if s, ok := findIn(cs, ours); ok {
			return s, true, nil
		}
	}
	s, ok := findIn(first, ours)
	return s, ok, nil
}

func findIn(cs []*gh.IssueComment, ours func(string, *gh.User) bool) (reply.Sent, bool) {
	for i := len(cs) - 1; i >= 0; i-- {
		if ours(cs[i].GetBody(), cs[i].GetUser()) {
			return reply.Sent{PlatformID: strconv.FormatInt(cs[i].GetID(), 10), URL: cs[i].GetHTMLURL()}, true
		}
	}
	return reply.Sent{}, false
}

func findReviewReply(ctx context.Context, client *gh.Client, owner, name string, number int, since time.Time,
	ours func(string, *gh.User) bool) (reply.Sent, bool, error) {
	opts := &gh.PullRequestListCommentsOptions{Sort: "created", Direction: "desc", ListOptions: gh.ListOptions{PerPage: 100}}
	if !since.IsZero() {
		opts.Since = since
	}
	for {
		cs, resp, err := client.PullRequests.ListComments(ctx, owner, name, number, opts)
		if err != nil {
			return reply.Sent{}, false, fmt.Errorf("list review comments of %s/%s#%d: %w", owner, name, number, redactURL(err))
		}
		for _, pc := range cs {
			if ours(pc.GetBody(), pc.GetUser()) {
				return reply.Sent{PlatformID: strconv.FormatInt(pc.GetID(), 10), URL: pc.GetHTMLURL()}, true, nil
			}
		}
		if resp.NextPage == 0 {
			return reply.Sent{}, false, nil
		}
		opts.Page = resp.NextPage
	}
}
