package github

import (
	"context"
	"fmt"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// ciRun is what check runs, check suites and workflow runs have in common.
type ciRun struct {
	action     string
	what       string // Check run, Check suite, Workflow
	name       string
	id         int64
	status     string
	conclusion string
	sha        string
	branch     string
	// headRepo is the repository the run's commit came from, when GitHub names it
	// (workflow runs do; check runs and suites do not).
	headRepo string
	prs      []*gh.PullRequest
	url      string
	title    string // commit or run title, when known
	detail   string // what the check reported, when known
	repo     *gh.Repository
	sender   *gh.User
	at       gh.Timestamp // when it completed (or was last updated)
}

// failed reports the conclusions that count as a CI failure.
func failed(conclusion string) bool {
	switch conclusion {
	case "failure", "timed_out", "startup_failure":
		return true
	}
	return false
}

func (m *mapper) checkRun(ctx context.Context, e *gh.CheckRunEvent) *spec {
	r := orEmpty(e.GetCheckRun())
	prs := r.PullRequests
	if len(prs) == 0 {
		prs = orEmpty(r.GetCheckSuite()).PullRequests
	}
	detail := r.GetOutput().GetTitle()
	if sum := connectors.Excerpt(r.GetOutput().GetSummary(), 160); sum != "" {
		detail = strings.TrimSpace(strings.TrimSuffix(detail, ".") + ". " + sum)
		detail = strings.TrimPrefix(detail, ". ")
	}
	return m.completedRun(ctx, ciRun{
		action: e.GetAction(), what: "Check run", name: r.GetName(), id: r.GetID(), status: r.GetStatus(),
		conclusion: r.GetConclusion(), sha: r.GetHeadSHA(), branch: r.GetCheckSuite().GetHeadBranch(), prs: prs,
		url: r.GetHTMLURL(), detail: detail, repo: e.GetRepo(), sender: e.GetSender(), at: r.GetCompletedAt(),
	})
}

func (m *mapper) checkSuite(ctx context.Context, e *gh.CheckSuiteEvent) *spec {
	s := orEmpty(e.GetCheckSuite())
	name := s.GetApp().GetName()
	if name == "" {
		name = s.GetApp().GetSlug()
	}
	url := ""
	if base := e.GetRepo().GetHTMLURL(); base != "" && s.GetHeadSHA() != "" {
		url = base + "/commit/" + s.GetHeadSHA() + "/checks"
	}
	return m.completedRun(ctx, ciRun{
		action: e.GetAction(), what: "Check suite", name: name, id: s.GetID(), status: s.GetStatus(),
		conclusion: s.GetConclusion(), sha: s.GetHeadSHA(), branch: s.GetHeadBranch(), prs: s.PullRequests,
		url: url, repo: e.GetRepo(), sender: e.GetSender(), at: s.GetUpdatedAt(),
	})
}

func (m *mapper) workflowRun(ctx context.Context, e *gh.WorkflowRunEvent) *spec {
	r := orEmpty(e.GetWorkflowRun())
	name := e.GetWorkflow().GetName()
	if name == "" {
		name = r.GetName()
	}
	return m.completedRun(ctx, ciRun{
		action: e.GetAction(), what: "Workflow", name: name, id: r.GetID(), status: r.GetStatus(),
		conclusion: r.GetConclusion(), sha: r.GetHeadSHA(), branch: r.GetHeadBranch(), headRepo: r.GetHeadRepository().GetFullName(),
		prs: r.PullRequests, url: r.GetHTMLURL(), title: r.GetDisplayTitle(), repo: e.GetRepo(), sender: e.GetSender(),
		at: r.GetUpdatedAt(),
	})
}

// completedRun maps a completed run: a failure is ci-failure; a success is ci-recovered when
// the last decisive conclusion for the same repo, branch and check was a failure, else
// ci-passed (low). Both successes are the lane's rest state, so a pass the model has nothing to
// be told about is superseded on arrival: stored and readable in the inbox, never a frame.
// Neutral, cancelled and skipped runs neither notify nor change the memory.
func (m *mapper) completedRun(ctx context.Context, r ciRun) *spec {
	if r.action != "completed" {
		return nil
	}
	repo := r.repo.GetFullName()
	scope, fork := r.scope(repo)
	lane := "ci:" + m.event + ":" + r.name
	// The repository's own branches keep the memory keys deployed state already has;
	// any other run is remembered under its lane's key, which no own branch's key equals.
	key := repo + scope + ":" + m.event + ":" + r.name
	if fork != "" || r.branch == "" {
		key = laneKey(repo, scope, lane)
	}
	var kind string
	prio := inbox.PriorityHigh
	switch {
	case failed(r.conclusion):
		kind = KindCIFailure
		m.setConclusion(ctx, key, r.conclusion)
	case r.conclusion == "success":
		last := m.lastConclusion(ctx, key)
		m.setConclusion(ctx, key, r.conclusion)
		kind, prio = KindCIRecovered, inbox.PriorityMedium
		if !failed(last) {
			kind, prio = KindCIPassed, inbox.PriorityLow
		}
	default:
		return nil
	}

	// One lane per pull request (or branch) and check: a failure that passes again before
	// the agent heard of it is nothing; heard of, its recovery is news.
	state := "success"
	if kind == KindCIFailure {
		state = "failure"
	}
	// A fork's branch is named the way GitHub labels a pull request's head, so routes and
	// thread templates matching a branch never take it for the repository's own.
	branch := r.branch
	if fork != "" && branch != "" {
		branch = fork + ":" + branch
	}
	s := &spec{
		kind: kind, priority: prio, repo: repo, where: scope, objectID: r.sha,
		branch: branch, author: r.sender, url: r.url, lane: lane, state: state, rest: "success", at: r.at,
	}
	where := fmt.Sprintf("%s branch %s (commit %s%s)", repo, r.branch, short(r.sha), quoted(r.title))
	switch {
	case len(r.prs) > 0:
		s.number, s.objectID = r.prs[0].GetNumber(), fmt.Sprint(r.id)
		where = fmt.Sprintf("pull request %s#%d (branch %s, commit %s%s)", repo, s.number, branch, short(r.sha), quoted(r.title))
	case r.branch == "":
		where = fmt.Sprintf("%s commit %s%s (no branch named)", repo, short(r.sha), quoted(r.title))
	case fork != "":
		where = fmt.Sprintf("%s branch %s, a fork of %s (commit %s%s)", fork, r.branch, repo, short(r.sha), quoted(r.title))
	}

	outcome := "passed again"
	if kind == KindCIPassed {
		outcome = "passed"
	}
	switch r.conclusion {
	case "failure":
		outcome = "failed"
	case "timed_out":
		outcome = "timed out"
	case "startup_failure":
		outcome = "failed to start"
	}
	sentence := fmt.Sprintf("%s %q %s on %s", r.what, r.name, outcome, where)
	switch kind {
	case KindCIRecovered:
		s.summary = sentence + " after an earlier failure."
	case KindCIPassed:
		s.summary = sentence + "."
	default:
		s.summary = withExcerpt(sentence, r.detail)
	}

	prNumbers := make([]int, 0, len(r.prs))
	for _, pr := range r.prs {
		prNumbers = append(prNumbers, pr.GetNumber())
	}
	s.attrs = inbox.Attributes{}.Set("branch", branch).Set("check", r.name).Set("conclusion", r.conclusion)
	s.payload = map[string]any{
		"action": r.action, "name": r.name, "status": r.status, "conclusion": r.conclusion,
		"head_sha": r.sha, "branch": r.branch, "run_id": r.id, "pull_requests": prNumbers,
		"detail": r.detail, "title": r.title,
	}
	if fork != "" {
		s.payload["head_repo"] = fork
	}
	return s
}

// scope scopes the keys of a run without a pull request, and names the fork it ran for
// ("" for the repository's own). GitHub sends a fork pull request's runs to the base
// repository with the fork's branch name and no pull request, so the branch alone may
// name a base branch ("master") the run never touched:
//   - the repository's own branch: "@{branch}";
//   - a fork's branch: "@{owner/fork}:{branch}" (no branch name holds ':', so never an
//     own branch's);
//   - no branch named (GitHub's check suites of a fork's commit, which name no fork
//     either): the commit, "@commit:{sha}", as one lane shared by every such run would
//     let one fork's pass answer another's failure.
func (r ciRun) scope(repo string) (scope, fork string) {
	if r.headRepo != "" && !strings.EqualFold(r.headRepo, repo) {
		fork = r.headRepo
	}
	switch {
	case r.branch == "":
		return "@commit:" + r.sha, fork
	case fork != "":
		return "@" + fork + ":" + r.branch, fork
	}
	return "@" + r.branch, ""
}

func (m *mapper) lastConclusion(ctx context.Context, key string) string {
	c, err := m.ci.LastConclusion(ctx, key)
	if err != nil {
		// Without memory a success cannot be called a recovery; the event is still stored.
		m.log.Warn("read CI state", "key", key, "error", err.Error())
	}
	return c
}

func (m *mapper) setConclusion(ctx context.Context, key, conclusion string) {
	if err := m.ci.SetConclusion(ctx, key, conclusion); err != nil {
		m.log.Warn("write CI state", "key", key, "error", err.Error())
	}
}

func (m *mapper) push(e *gh.PushEvent) *spec {
	def := e.GetRepo().GetDefaultBranch()
	if def == "" {
		def = m.cfg.DefaultBranch
	}
	if e.GetDeleted() || e.GetRef() != "refs/heads/"+def {
		return nil
	}
	repo := e.GetRepo().GetFullName()
	n := len(e.Commits)
	noun := "commits"
	if n == 1 {
		noun = "commit"
	}
	sentence := fmt.Sprintf("%s pushed %d %s to %s %s", e.GetSender().GetLogin(), n, noun, repo, def)
	if e.GetForced() {
		sentence = fmt.Sprintf("%s force-pushed %s %s (%d %s)", e.GetSender().GetLogin(), repo, def, n, noun)
	}
	commits := make([]map[string]any, 0, min(n, 20))
	for _, c := range e.Commits[:min(n, 20)] {
		commits = append(commits, map[string]any{
			"id": c.GetID(), "message": connectors.FirstLine(c.GetMessage()), "author": c.GetAuthor().GetLogin(),
		})
	}
	url := e.GetCompare()
	if url == "" {
		url = e.GetHeadCommit().GetURL()
	}
	return &spec{
		kind: KindPush, priority: inbox.PriorityLow, repo: repo, where: "@" + def, objectID: e.GetAfter(),
		branch: def, author: e.GetSender(), url: url, at: e.GetHeadCommit().GetTimestamp(),
		summary: withExcerpt(sentence, connectors.FirstLine(e.GetHeadCommit().GetMessage())),
		attrs:   inbox.Attributes{}.Set("branch", def).Set("commits", n),
		payload: map[string]any{
			"before": e.GetBefore(), "after": e.GetAfter(), "forced": e.GetForced(), "branch": def,
			"commits": commits,
		},
	}
}

func (m *mapper) deploymentStatus(e *gh.DeploymentStatusEvent) *spec {
	st, d := e.GetDeploymentStatus(), e.GetDeployment()
	state := st.GetState()
	if state != "failure" && state != "error" {
		return nil
	}
	repo := e.GetRepo().GetFullName()
	env := st.GetEnvironment()
	if env == "" {
		env = d.GetEnvironment()
	}
	outcome := "failed"
	if state == "error" {
		outcome = "errored"
	}
	url := st.GetLogURL()
	if url == "" {
		url = st.GetTargetURL()
	}
	if url == "" {
		url = e.GetRepo().GetHTMLURL() + "/deployments"
	}
	return &spec{
		kind: KindDeployFailure, priority: inbox.PriorityHigh, repo: repo, group: ":" + env,
		objectID: fmt.Sprint(st.GetID()), branch: d.GetRef(), author: e.GetSender(), url: url,
		at: orTime(st.GetUpdatedAt(), st.GetCreatedAt()),
		summary: withExcerpt(fmt.Sprintf("Deployment of %s (commit %s) to %s in %s %s", d.GetRef(), short(d.GetSHA()),
			env, repo, outcome), st.GetDescription()),
		attrs: inbox.Attributes{}.Set("environment", env).Set("state", state),
		payload: map[string]any{
			"environment": env, "state": state, "ref": d.GetRef(), "sha": d.GetSHA(),
			"description": st.GetDescription(), "deployment_id": d.GetID(), "status_id": st.GetID(),
		},
	}
}

func (m *mapper) release(e *gh.ReleaseEvent) *spec {
	if e.GetAction() != "published" {
		return nil
	}
	r := e.GetRelease()
	repo := e.GetRepo().GetFullName()
	name := r.GetName()
	if name == "" {
		name = r.GetTagName()
	}
	what := "release"
	if r.GetPrerelease() {
		what = "pre-release"
	}
	return &spec{
		kind: KindRelease, priority: inbox.PriorityLow, repo: repo, objectID: fmt.Sprint(r.GetID()),
		author: e.GetSender(), url: r.GetHTMLURL(), at: r.GetPublishedAt(),
		summary: withExcerpt(fmt.Sprintf("%s published %s %q of %s", e.GetSender().GetLogin(), what, name, repo), r.GetBody()),
		attrs:   inbox.Attributes{}.Set("tag", r.GetTagName()),
		payload: map[string]any{
			"tag": r.GetTagName(), "name": r.GetName(), "prerelease": r.GetPrerelease(), "body": plainBody(r.GetBody()),
		},
	}
}

// alertAt builds a security-alert item created at: each alert is its own record (the
// group names it), so distinct alerts never absorb each other.
func alertAt(at gh.Timestamp, tool, e, repo string, sender *gh.User, number int, prio inbox.Priority, url, summary, severity string, payload map[string]any) *spec {
	payload["tool"], payload["alert"], payload["severity"] = tool, number, severity
	attrs := inbox.Attributes{}.Set("tool", tool).Set("alert", number)
	if severity != "" {
		attrs = attrs.Set("severity", severity)
	}
	return &spec{
		kind: KindSecurityAlert, priority: prio, repo: repo, group: fmt.Sprintf(":%s#%d", tool, number),
		objectID: e, author: sender, url: url, summary: summary, attrs: attrs, payload: payload, at: at,
	}
}

func (m *mapper) dependabotAlert(e *gh.DependabotAlertEvent) *spec {
	if e.GetAction() != "created" {
		return nil
	}
	a := e.GetAlert()
	adv, pkg := a.GetSecurityAdvisory(), a.GetDependency().GetPackage()
	repo := e.GetRepo().GetFullName()
	sev := adv.GetSeverity()
	if sev == "" {
		sev = a.GetSecurityVulnerability().GetSeverity()
	}
	summary := fmt.Sprintf("Dependabot alert #%d in %s: %s (%s severity, %s package %s in %s).", a.GetNumber(), repo,
		connectors.Truncate(connectors.PlainText(adv.GetSummary()), connectors.ExcerptLen), sev,
		pkg.GetEcosystem(), pkg.GetName(), a.GetDependency().GetManifestPath())
	return alertAt(a.GetCreatedAt(), "dependabot", e.GetAction(), repo, e.GetSender(), a.GetNumber(), inbox.PriorityHigh, a.GetHTMLURL(), summary, sev,
		map[string]any{
			"ghsa_id": adv.GetGHSAID(), "cve_id": adv.GetCVEID(), "package": pkg.GetName(), "ecosystem": pkg.GetEcosystem(),
			"manifest": a.GetDependency().GetManifestPath(), "summary": adv.GetSummary(),
			"vulnerable_range": a.GetSecurityVulnerability().GetVulnerableVersionRange(),
			"patched_version":  a.GetSecurityVulnerability().GetFirstPatchedVersion().GetIdentifier(),
		})
}

func (m *mapper) codeScanningAlert(e *gh.CodeScanningAlertEvent) *spec {
	if e.GetAction() != "created" {
		return nil
	}
	a := e.GetAlert()
	repo := e.GetRepo().GetFullName()
	rule, loc := a.GetRule(), a.GetMostRecentInstance().GetLocation()
	sev := rule.GetSecuritySeverityLevel()
	if sev == "" {
		sev = rule.GetSeverity()
	}
	desc := rule.GetDescription()
	if desc == "" {
		desc = a.GetRuleDescription()
	}
	at := ""
	if loc.GetPath() != "" {
		at = fmt.Sprintf(" at %s:%d", loc.GetPath(), loc.GetStartLine())
	}
	summary := fmt.Sprintf("Code scanning alert #%d in %s: %s (%s severity, found by %s)%s.", a.GetNumber(), repo,
		connectors.Truncate(connectors.PlainText(desc), connectors.ExcerptLen), sev, a.GetTool().GetName(), at)
	return alertAt(a.GetCreatedAt(), "code-scanning", e.GetAction(), repo, e.GetSender(), a.GetNumber(), inbox.PriorityHigh, a.GetHTMLURL(), summary, sev,
		map[string]any{
			"rule_id": rule.GetID(), "rule": desc, "scanner": a.GetTool().GetName(), "ref": e.GetRef(),
			"commit": e.GetCommitOID(), "path": loc.GetPath(), "line": loc.GetStartLine(),
		})
}

func (m *mapper) secretScanningAlert(e *gh.SecretScanningAlertEvent) *spec {
	if e.GetAction() != "created" {
		return nil
	}
	a := e.GetAlert()
	repo := e.GetRepo().GetFullName()
	kind := a.GetSecretTypeDisplayName()
	if kind == "" {
		kind = a.GetSecretType()
	}
	url := a.GetHTMLURL()
	if url == "" && e.GetRepo().GetHTMLURL() != "" {
		url = fmt.Sprintf("%s/security/secret-scanning/%d", e.GetRepo().GetHTMLURL(), a.GetNumber())
	}
	// The alert's secret field is never copied: notifications are read by models and logged.
	summary := fmt.Sprintf("Secret scanning alert #%d in %s: a secret of type %s was found in the repository.", a.GetNumber(), repo, kind)
	return alertAt(a.GetCreatedAt(), "secret-scanning", e.GetAction(), repo, e.GetSender(), a.GetNumber(), inbox.PriorityUrgent, url, summary, "",
		map[string]any{"secret_type": a.GetSecretType(), "secret_type_display_name": a.GetSecretTypeDisplayName()})
}
