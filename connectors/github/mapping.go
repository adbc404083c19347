package github

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Kinds the connector produces.
const (
	KindCIFailure       = "ci-failure"
	KindCIRecovered     = "ci-recovered"
	KindCIPassed        = "ci-passed"
	KindPROpened        = "pr-opened"
	KindPRReopened      = "pr-reopened"
	KindPRReady         = "pr-ready"
	KindPRMerged        = "pr-merged"
	KindPRClosed        = "pr-closed"
	KindPRPushed        = "pr-pushed"
	KindReviewRequested = "review-requested"
	KindReviewRemoved   = "review-request-removed"
	KindPRReview        = "pr-review"
	KindComment         = "comment"
	KindIssueOpened     = "issue-opened"
	KindIssueClosed     = "issue-closed"
	KindIssueReopened   = "issue-reopened"
	KindIssueAssigned   = "issue-assigned"
	KindPush            = "push"
	KindDeployFailure   = "deploy-failure"
	KindRelease         = "release"
	KindSecurityAlert   = "security-alert"
)

// VerifiedBy is the provenance of a GitHub item whose delivery was signed.
const VerifiedBy = "hmac-github"

// VerifiedByAPI is the provenance of an item whose delivery backfill read from
// GitHub's API with the connector's credentials (not signed, but GitHub's own record).
const VerifiedByAPI = "github-api"

// messageLen bounds the text of a comment handed to an agent as a message: long
// enough to be the whole comment in practice, short enough to bound a model turn.
const messageLen = 4000

// bodyLen bounds bodies copied into payloads.
const bodyLen = 16000

// mapper turns one parsed delivery into items.
type mapper struct {
	cfg      *Config
	ci       CIState
	log      *slog.Logger
	event    string
	delivery string
	// verifiedBy is the items' provenance; "": VerifiedBy (signed).
	verifiedBy string
}

func (m *mapper) provenance() string {
	if m.verifiedBy == "" {
		return VerifiedBy
	}
	return m.verifiedBy
}

// spec is what a mapping decides; item() derives the keys, fields and provenance.
type spec struct {
	kind     string
	priority inbox.Priority
	repo     string
	number   int
	// where scopes keys that have no number: "@branch" for CI and pushes ("@{fork}:{branch}"
	// for a fork's CI, see ciRun.scope).
	where string
	// group, when set, narrows the coalesce key below the kind (distinct alerts and
	// environments must not absorb each other).
	group       string
	objectID    string
	branch      string
	author      *gh.User
	association string
	url         string
	labels      []*gh.Label
	summary     string
	attrs       inbox.Attributes // after repo, number, url, author
	payload     map[string]any
	message     string // user-authored text, for deliver_as routes
	skip        string
	// reviewComment is the review thread's first comment, for a review comment: an
	// answer goes into that thread.
	reviewComment int64
	// lane, when set, puts the item in a net-state lane: "github:{repo}{scope}:{lane}"
	// with state and rest (see inbox.DecideNet).
	lane, state, rest string
	// at is when it happened, by the payload object's own time (Item.OccurredAt).
	at gh.Timestamp
	// ends is the terminal state the issue or pull request reached (Item.Ends).
	ends string
}

func (m *mapper) items(ctx context.Context, parsed any) []connectors.Item {
	var s *spec
	switch e := parsed.(type) {
	case *gh.CheckRunEvent:
		s = m.checkRun(ctx, e)
	case *gh.CheckSuiteEvent:
		s = m.checkSuite(ctx, e)
	case *gh.WorkflowRunEvent:
		s = m.workflowRun(ctx, e)
	case *gh.PullRequestEvent:
		s = m.pullRequest(e)
	case *gh.PullRequestReviewEvent:
		s = m.review(e)
	case *gh.PullRequestReviewCommentEvent:
		s = m.reviewComment(e)
	case *gh.IssueCommentEvent:
		s = m.issueComment(e)
	case *gh.IssuesEvent:
		s = m.issue(e)
	case *gh.PushEvent:
		s = m.push(e)
	case *gh.DeploymentStatusEvent:
		s = m.deploymentStatus(e)
	case *gh.ReleaseEvent:
		s = m.release(e)
	case *gh.DependabotAlertEvent:
		s = m.dependabotAlert(e)
	case *gh.CodeScanningAlertEvent:
		s = m.codeScanningAlert(e)
	case *gh.SecretScanningAlertEvent:
		s = m.secretScanningAlert(e)
	}
	if s == nil {
		return nil
	}
	return []connectors.Item{m.item(s)}
}

// laneKey is the net-state key of a lane: "github:{repo}{scope}:{lane}".
func laneKey(repo, scope, lane string) string {
	return "github:" + repo + scope + ":" + lane
}

func (m *mapper) item(s *spec) connectors.Item {
	login := s.author.GetLogin()
	isBot := isBotUser(s.author)
	var labels []string
	for _, l := range s.labels {
		labels = append(labels, l.GetName())
	}
	attrs := inbox.Attributes{}.Set("repo", s.repo)
	if s.number > 0 {
		attrs = attrs.Set("number", s.number)
	}
	if s.url != "" {
		attrs = attrs.Set("url", s.url)
	}
	if login != "" {
		attrs = attrs.Set("author", login)
	}
	attrs = attrs.Merge(s.attrs)

	meta := map[string]any{
		connectors.MetaVerifiedBy:  m.provenance(),
		connectors.MetaAuthor:      login,
		connectors.MetaAuthorIsBot: isBot,
		"github_event":             m.event,
	}
	if s.association != "" {
		meta[connectors.MetaAuthorAssociation] = s.association
	}
	if m.delivery != "" {
		meta["delivery_id"] = m.delivery
	}
	if s.repo != "" && s.number > 0 {
		meta[reply.MetadataKey] = reply.NewTo(Source, m.cfg.Name, Place{Repo: s.repo, Number: s.number, ReviewCommentID: s.reviewComment})
	}

	scope := s.where
	if s.number > 0 {
		scope = fmt.Sprintf("#%d", s.number)
	}
	coalesce := "github:" + s.repo + scope + ":" + s.kind + s.group
	it := connectors.Item{
		Kind:        s.kind,
		Priority:    s.priority,
		Summary:     s.summary,
		DedupeKey:   coalesce + ":" + s.objectID,
		CoalesceKey: coalesce,
		Attributes:  attrs,
		Metadata:    meta,
		Fields: connectors.Fields{
			Source:    "github",
			Connector: m.cfg.Name,
			Kind:      s.kind,
			Repo:      s.repo,
			Number:    s.number,
			Branch:    s.branch,
			Author:    login,
			Labels:    labels,
		},
		Skip: s.skip,
	}
	if !s.at.IsZero() {
		it.OccurredAt = s.at.UTC()
	}
	if s.repo != "" {
		it.WatchResources = []string{s.repo}
	}
	if s.number > 0 {
		it.SourceID = strconv.Itoa(s.number)
		it.WatchResources = []string{fmt.Sprintf("%s#%d", s.repo, s.number), s.repo}
		it.Ends = s.ends
	}
	if s.message != "" {
		it.Message = &connectors.Message{Name: login, From: "github", Text: s.message}
	}
	if s.lane != "" {
		it.NetKey, it.State, it.RestState = laneKey(s.repo, scope, s.lane), s.state, s.rest
	}
	if s.payload != nil {
		s.payload["event"] = m.event
		s.payload["repo"] = s.repo
		if s.number > 0 {
			s.payload["number"] = s.number
		}
		if s.url != "" {
			s.payload["url"] = s.url
		}
		if login != "" {
			s.payload["author"] = login
		}
		if len(labels) > 0 {
			s.payload["labels"] = labels
		}
		if b, err := json.Marshal(s.payload); err == nil {
			it.Payload = b
		} else {
			m.log.Warn("payload not encodable", "kind", s.kind, "error", err.Error())
		}
	}
	return it
}

// isBotUser reports a GitHub App or bot account.
func isBotUser(u *gh.User) bool {
	return u.GetType() == "Bot" || strings.HasSuffix(u.GetLogin(), "[bot]")
}

// SkipUnauthorized is why a comment or review by an author outside
// authorized_associations is stored ignored.
const SkipUnauthorized = "author not authorized"

// commentSkip keeps the bot's own words, unlisted bots and authors whose association
// with the repository is outside authorized_associations out of routing (and out of
// watches): a stranger's comment on a public repository must not reach an agent. A bot
// listed in allowed_bots is authorized by that list.
func (m *mapper) commentSkip(u *gh.User, association string) string {
	login := u.GetLogin()
	switch {
	case m.cfg.isBotLogin(login):
		return "written by the configured bot " + login
	case isBotUser(u) && !m.cfg.allowedBot(login):
		return "written by bot " + login + ", not in allowed_bots"
	case isBotUser(u):
		return ""
	case !m.cfg.authorized(association):
		return SkipUnauthorized
	}
	return ""
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// quoted is ` "title"` or "" for an empty title.
func quoted(s string) string {
	if s = strings.TrimSpace(connectors.Truncate(connectors.PlainText(s), 120)); s == "" {
		return ""
	}
	return fmt.Sprintf(" %q", s)
}

// withExcerpt ends a sentence, adding ": excerpt" when body has text.
func withExcerpt(sentence, body string) string {
	if ex := connectors.Excerpt(body, connectors.ExcerptLen); ex != "" {
		return sentence + ": " + ex
	}
	return period(sentence)
}

// period ends a sentence unless a quoted title already did (`… "Fix it."`).
func period(s string) string {
	for _, end := range []string{".", "!", "?", `."`, `!"`, `?"`} {
		if strings.HasSuffix(s, end) {
			return s
		}
	}
	return s + "."
}

func plainBody(s string) string { return connectors.Truncate(connectors.PlainText(s), bodyLen) }

func messageText(s string) string { return connectors.Truncate(connectors.PlainText(s), messageLen) }

func (m *mapper) pullRequest(e *gh.PullRequestEvent) *spec {
	pr := orEmpty(e.GetPullRequest())
	repo := e.GetRepo().GetFullName()
	ref := fmt.Sprintf("pull request %s#%d%s", repo, pr.GetNumber(), quoted(pr.GetTitle()))
	who := e.GetSender().GetLogin()
	s := &spec{
		priority: inbox.PriorityMedium, repo: repo, number: pr.GetNumber(),
		objectID: fmt.Sprint(pr.GetID()), branch: pr.GetHead().GetRef(), author: e.GetSender(),
		url: pr.GetHTMLURL(), labels: pr.Labels, at: pr.GetUpdatedAt(),
	}
	if e.GetSender().GetLogin() == pr.GetUser().GetLogin() {
		s.association = pr.GetAuthorAssociation()
	}
	switch e.GetAction() {
	case "opened":
		s.kind, s.lane, s.state = KindPROpened, "pr", "open"
		what := "opened pull request"
		if pr.GetDraft() {
			what = "opened draft pull request"
		}
		s.summary = withExcerpt(fmt.Sprintf("%s %s %s#%d%s (%s into %s)", who, what, repo, pr.GetNumber(),
			quoted(pr.GetTitle()), pr.GetHead().GetRef(), pr.GetBase().GetRef()), pr.GetBody())
		s.message = messageText(pr.GetBody())
	case "reopened":
		s.kind, s.summary = KindPRReopened, period(fmt.Sprintf("%s reopened %s", who, ref))
		s.lane, s.state = "pr", "open"
	case "ready_for_review":
		s.kind, s.summary = KindPRReady, fmt.Sprintf("%s marked %s ready for review.", who, ref)
	case "closed":
		s.lane, s.at, s.ends = "pr", orTime(pr.GetClosedAt(), s.at), watch.EndClosed
		if pr.GetMerged() {
			s.kind, s.state, s.ends = KindPRMerged, "merged", watch.EndMerged
			s.summary = fmt.Sprintf("%s merged %s into %s.", who, ref, pr.GetBase().GetRef())
		} else {
			s.kind, s.state, s.summary = KindPRClosed, "closed", fmt.Sprintf("%s closed %s without merging.", who, ref)
		}
	case "synchronize":
		s.kind, s.priority, s.objectID = KindPRPushed, inbox.PriorityLow, e.GetAfter()
		s.summary = fmt.Sprintf("%s pushed to %s (branch %s, now at %s).", who, ref, pr.GetHead().GetRef(), short(e.GetAfter()))
	case "review_requested", "review_request_removed":
		reviewer, team := e.GetRequestedReviewer(), e.GetRequestedTeam()
		var whom string
		switch {
		case reviewer != nil && m.cfg.isBotLogin(reviewer.GetLogin()):
			whom, s.objectID = reviewer.GetLogin(), reviewer.GetLogin()
		case team != nil && m.cfg.BotTeam != "" && strings.EqualFold(team.GetSlug(), m.cfg.BotTeam):
			whom, s.objectID = "team "+team.GetSlug(), "team:"+team.GetSlug()
		default:
			return nil
		}
		// One lane per reviewer: a request withdrawn before the agent heard of it is
		// nothing; withdrawn after, the agent learns it.
		s.lane, s.rest = "review:"+s.objectID, "removed"
		if e.GetAction() == "review_requested" {
			s.kind, s.priority, s.state = KindReviewRequested, inbox.PriorityHigh, "requested"
			s.summary = fmt.Sprintf("%s requested a review from %s on %s.", who, whom, ref)
		} else {
			s.kind, s.state = KindReviewRemoved, "removed"
			s.summary = fmt.Sprintf("%s removed the review request for %s on %s.", who, whom, ref)
		}
		s.attrs = s.attrs.Set("reviewer", whom)
	default:
		return nil
	}
	s.attrs = s.attrs.Set("branch", pr.GetHead().GetRef())
	s.payload = map[string]any{
		"action": e.GetAction(), "title": pr.GetTitle(), "state": pr.GetState(), "draft": pr.GetDraft(),
		"merged": pr.GetMerged(), "head": pr.GetHead().GetRef(), "base": pr.GetBase().GetRef(),
		"head_sha": pr.GetHead().GetSHA(), "body": plainBody(pr.GetBody()), "pr_author": pr.GetUser().GetLogin(),
	}
	return s
}

func (m *mapper) review(e *gh.PullRequestReviewEvent) *spec {
	if e.GetAction() != "submitted" {
		return nil
	}
	r, pr := e.GetReview(), orEmpty(e.GetPullRequest())
	repo := e.GetRepo().GetFullName()
	state := strings.ToLower(r.GetState())
	prio, verb := inbox.PriorityMedium, "reviewed"
	switch state {
	case "changes_requested":
		prio, verb = inbox.PriorityHigh, "requested changes on"
	case "approved":
		verb = "approved"
	}
	return &spec{
		kind: KindPRReview, priority: prio, repo: repo, number: pr.GetNumber(), objectID: fmt.Sprint(r.GetID()),
		branch: pr.GetHead().GetRef(), author: r.GetUser(), association: r.GetAuthorAssociation(),
		url: r.GetHTMLURL(), labels: pr.Labels,
		summary: withExcerpt(fmt.Sprintf("%s %s pull request %s#%d%s", r.GetUser().GetLogin(), verb, repo,
			pr.GetNumber(), quoted(pr.GetTitle())), r.GetBody()),
		attrs:   inbox.Attributes{}.Set("state", state),
		message: messageText(r.GetBody()),
		skip:    m.commentSkip(r.GetUser(), r.GetAuthorAssociation()),
		at:      r.GetSubmittedAt(),
		payload: map[string]any{
			"action": e.GetAction(), "state": state, "title": pr.GetTitle(), "body": plainBody(r.GetBody()),
			"commit_id": r.GetCommitID(), "review_id": r.GetID(),
		},
	}
}

// comment builds a comment item; created and edited share the dedupe key (the
// comment id) so an edit lands on the pending record of the original.
func (m *mapper) comment(action, repo string, number int, onPR bool, title string, labels []*gh.Label,
	id int64, user *gh.User, assoc, url, body, where string, created, updated gh.Timestamp) *spec {
	if action != "created" && action != "edited" {
		return nil
	}
	what := "issue"
	if onPR {
		what = "pull request"
	}
	verb := "commented on"
	if action == "edited" {
		verb = "edited a comment on"
	}
	mention := m.cfg.mentionsBot(body)
	prio := inbox.PriorityMedium
	if mention {
		prio = inbox.PriorityHigh
	}
	s := &spec{
		kind: KindComment, priority: prio, repo: repo, number: number, objectID: fmt.Sprint(id),
		author: user, association: assoc, url: url, labels: labels,
		summary: withExcerpt(fmt.Sprintf("%s %s %s%s %s#%d%s", user.GetLogin(), verb, where, what, repo, number, quoted(title)), body),
		message: messageText(body),
		skip:    m.commentSkip(user, assoc),
		payload: map[string]any{"action": action, "title": title, "body": plainBody(body), "comment_id": id, "on": what},
	}
	if mention {
		s.attrs = s.attrs.Set("mention", true)
	}
	s.at = created
	if action == "edited" {
		s.at = updated
	}
	return s
}

func (m *mapper) issueComment(e *gh.IssueCommentEvent) *spec {
	is, c := orEmpty(e.GetIssue()), e.GetComment()
	return m.comment(e.GetAction(), e.GetRepo().GetFullName(), is.GetNumber(), is.GetPullRequestLinks() != nil, is.GetTitle(),
		is.Labels, c.GetID(), c.GetUser(), c.GetAuthorAssociation(), c.GetHTMLURL(), c.GetBody(), "", c.GetCreatedAt(), c.GetUpdatedAt())
}

func (m *mapper) reviewComment(e *gh.PullRequestReviewCommentEvent) *spec {
	pr, c := orEmpty(e.GetPullRequest()), e.GetComment()
	where := ""
	if p := c.GetPath(); p != "" {
		where = p
		if l := c.GetLine(); l > 0 {
			where = fmt.Sprintf("%s:%d", p, l)
		}
		where += " in "
	}
	s := m.comment(e.GetAction(), e.GetRepo().GetFullName(), pr.GetNumber(), true, pr.GetTitle(), pr.Labels,
		c.GetID(), c.GetUser(), c.GetAuthorAssociation(), c.GetHTMLURL(), c.GetBody(), where, c.GetCreatedAt(), c.GetUpdatedAt())
	if s != nil {
		s.branch = pr.GetHead().GetRef()
		// GitHub takes replies to a thread's first comment only.
		s.reviewComment = c.GetID()
		if root := c.GetInReplyTo(); root > 0 {
			s.reviewComment = root
		}
		s.payload["path"], s.payload["line"], s.payload["diff_hunk"] = c.GetPath(), c.GetLine(), c.GetDiffHunk()
	}
	return s
}

func (m *mapper) issue(e *gh.IssuesEvent) *spec {
	is := orEmpty(e.GetIssue())
	repo := e.GetRepo().GetFullName()
	who := e.GetSender().GetLogin()
	ref := fmt.Sprintf("issue %s#%d%s", repo, is.GetNumber(), quoted(is.GetTitle()))
	s := &spec{
		priority: inbox.PriorityMedium, repo: repo, number: is.GetNumber(), objectID: fmt.Sprint(is.GetID()),
		author: e.GetSender(), url: is.GetHTMLURL(), labels: is.Labels, at: is.GetUpdatedAt(),
	}
	if who == is.GetUser().GetLogin() {
		s.association = is.GetAuthorAssociation()
	}
	switch e.GetAction() {
	case "opened":
		s.kind, s.summary = KindIssueOpened, withExcerpt(fmt.Sprintf("%s opened %s", who, ref), is.GetBody())
		s.message = messageText(is.GetBody())
		s.lane, s.state = "issue", "open"
	case "closed":
		s.kind, s.summary = KindIssueClosed, period(fmt.Sprintf("%s closed %s", who, ref))
		s.lane, s.state, s.ends = "issue", "closed", watch.EndClosed
		s.at = orTime(is.GetClosedAt(), s.at)
		if r := is.GetStateReason(); r != "" {
			s.summary = fmt.Sprintf("%s closed %s as %s.", who, ref, strings.ReplaceAll(r, "_", " "))
		}
	case "reopened":
		s.kind, s.summary = KindIssueReopened, period(fmt.Sprintf("%s reopened %s", who, ref))
		s.lane, s.state = "issue", "open"
	case "assigned":
		if !m.cfg.isBotLogin(e.GetAssignee().GetLogin()) {
			return nil
		}
		s.kind, s.priority, s.objectID = KindIssueAssigned, inbox.PriorityHigh, e.GetAssignee().GetLogin()
		s.summary = withExcerpt(fmt.Sprintf("%s assigned %s to %s", who, ref, e.GetAssignee().GetLogin()), is.GetBody())
	default:
		return nil
	}
	s.attrs = s.attrs.Set("state", is.GetState())
	s.payload = map[string]any{
		"action": e.GetAction(), "title": is.GetTitle(), "state": is.GetState(), "state_reason": is.GetStateReason(),
		"body": plainBody(is.GetBody()), "issue_author": is.GetUser().GetLogin(),
	}
	return s
}

// orTime is a when set, else b: the payload's most precise time first.
func orTime(a, b gh.Timestamp) gh.Timestamp {
	if a.IsZero() {
		return b
	}
	return a
}

// orEmpty stands in an empty object for one a signed payload left out, so the mapping
// reads zero values instead of dereferencing nil.
func orEmpty[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}
