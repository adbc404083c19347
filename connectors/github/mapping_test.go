package github

import (
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

var update = flag.Bool("update", false, "rewrite testdata/golden summaries")

type mappingCase struct {
	golden string
	index  string // octokit index, api.github.com when empty
	event  string
	action string
	filter func(map[string]any) bool
	mutate func(map[string]any)
	// prior, when set, is delivered first: the same example with this mutation.
	prior    func(map[string]any)
	kind     string
	priority inbox.Priority
	dedupe   string
	coalesce string
	// net is the net-state lane "netKey state restState" ("" for none).
	net string
}

func hasPRs(path string, want bool) func(map[string]any) bool {
	return func(m map[string]any) bool {
		prs, _ := get(m, path).([]any)
		return (len(prs) > 0) == want
	}
}

func conclusion(path, c string) func(map[string]any) {
	return func(m map[string]any) { set(m, path, c) }
}

func mappingCases() []mappingCase {
	const repo = "Codertocat/Hello-World"
	return []mappingCase{
		{golden: "check_run_failure", event: "check_run", action: "completed",
			filter: func(m map[string]any) bool { return get(m, "check_run.conclusion") == "failure" },
			kind:   KindCIFailure, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + "#2:ci-failure:128620228", coalesce: "github:" + repo + "#2:ci-failure", net: "github:" + repo + "#2:ci:check_run:Octocoders-linter failure success"},
		{golden: "check_run_timed_out", event: "check_run", action: "completed",
			filter: func(m map[string]any) bool { return get(m, "check_run.conclusion") == "success" },
			mutate: conclusion("check_run.conclusion", "timed_out"),
			kind:   KindCIFailure, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + "#2:ci-failure:128620228", coalesce: "github:" + repo + "#2:ci-failure", net: "github:" + repo + "#2:ci:check_run:Octocoders-linter failure success"},
		{golden: "check_run_recovered", event: "check_run", action: "completed",
			filter: func(m map[string]any) bool { return get(m, "check_run.conclusion") == "success" },
			prior:  conclusion("check_run.conclusion", "failure"),
			kind:   KindCIRecovered, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:ci-recovered:128620228", coalesce: "github:" + repo + "#2:ci-recovered", net: "github:" + repo + "#2:ci:check_run:Octocoders-linter success success"},
		// A success with no earlier failure: low, and the lane's rest state (superseded on arrival by net state).
		{golden: "check_run_passed", event: "check_run", action: "completed",
			filter: func(m map[string]any) bool { return get(m, "check_run.conclusion") == "success" },
			kind:   KindCIPassed, priority: inbox.PriorityLow,
			dedupe: "github:" + repo + "#2:ci-passed:128620228", coalesce: "github:" + repo + "#2:ci-passed", net: "github:" + repo + "#2:ci:check_run:Octocoders-linter success success"},
		{golden: "check_suite_failure_branch", event: "check_suite", action: "completed",
			filter: hasPRs("check_suite.pull_requests", false), mutate: conclusion("check_suite.conclusion", "failure"),
			kind: KindCIFailure, priority: inbox.PriorityHigh,
			dedupe:   "github:" + repo + "@main:ci-failure:ec26c3e57ca3a959ca5aad62de7213c562f8c821",
			coalesce: "github:" + repo + "@main:ci-failure", net: "github:" + repo + "@main:ci:check_suite:octocoders-linter failure success"},
		{golden: "check_suite_recovered_pr", event: "check_suite", action: "completed",
			filter: hasPRs("check_suite.pull_requests", true), prior: conclusion("check_suite.conclusion", "startup_failure"),
			kind: KindCIRecovered, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:ci-recovered:118578147", coalesce: "github:" + repo + "#2:ci-recovered", net: "github:" + repo + "#2:ci:check_suite:octocoders-linter success success"},
		{golden: "workflow_run_failure_branch", event: "workflow_run", action: "completed",
			filter: func(m map[string]any) bool {
				return get(m, "workflow_run.conclusion") == "success" && hasPRs("workflow_run.pull_requests", false)(m)
			},
			mutate: conclusion("workflow_run.conclusion", "failure"),
			kind:   KindCIFailure, priority: inbox.PriorityHigh,
			dedupe:   "github:octo-org/octo-repo@master:ci-failure:3484a3fb816e0859fd6e1cea078d76385ff50625",
			coalesce: "github:octo-org/octo-repo@master:ci-failure", net: "github:octo-org/octo-repo@master:ci:workflow_run:test failure success"},
		{golden: "workflow_run_failure_pr", event: "workflow_run", action: "completed",
			filter: hasPRs("workflow_run.pull_requests", true), mutate: conclusion("workflow_run.conclusion", "failure"),
			kind: KindCIFailure, priority: inbox.PriorityHigh,
			dedupe: "github:octo-org/octo-repo#2:ci-failure:289782451", coalesce: "github:octo-org/octo-repo#2:ci-failure", net: "github:octo-org/octo-repo#2:ci:workflow_run:test failure success"},
		{golden: "workflow_run_recovered", event: "workflow_run", action: "completed",
			filter: hasPRs("workflow_run.pull_requests", true), prior: conclusion("workflow_run.conclusion", "failure"),
			kind: KindCIRecovered, priority: inbox.PriorityMedium,
			dedupe: "github:octo-org/octo-repo#2:ci-recovered:289782451", coalesce: "github:octo-org/octo-repo#2:ci-recovered", net: "github:octo-org/octo-repo#2:ci:workflow_run:test success success"},
		{golden: "pr_opened", event: "pull_request", action: "opened",
			filter: func(m map[string]any) bool { return get(m, "pull_request.body") != nil },
			kind:   KindPROpened, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:pr-opened:279147437", coalesce: "github:" + repo + "#2:pr-opened", net: "github:" + repo + "#2:pr open"},
		{golden: "pr_reopened", event: "pull_request", action: "reopened", kind: KindPRReopened, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:pr-reopened:279147437", coalesce: "github:" + repo + "#2:pr-reopened", net: "github:" + repo + "#2:pr open"},
		{golden: "pr_ready", event: "pull_request", action: "ready_for_review", kind: KindPRReady, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:pr-ready:279147437", coalesce: "github:" + repo + "#2:pr-ready"},
		{golden: "pr_closed", event: "pull_request", action: "closed", kind: KindPRClosed, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:pr-closed:279147437", coalesce: "github:" + repo + "#2:pr-closed", net: "github:" + repo + "#2:pr closed"},
		{golden: "pr_merged", event: "pull_request", action: "closed",
			mutate: func(m map[string]any) { set(m, "pull_request.merged", true) },
			kind:   KindPRMerged, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:pr-merged:279147437", coalesce: "github:" + repo + "#2:pr-merged", net: "github:" + repo + "#2:pr merged"},
		{golden: "pr_pushed", event: "pull_request", action: "synchronize", kind: KindPRPushed, priority: inbox.PriorityLow,
			dedupe:   "github:" + repo + "#2:pr-pushed:ec26c3e57ca3a959ca5aad62de7213c562f8c821",
			coalesce: "github:" + repo + "#2:pr-pushed"},
		{golden: "review_requested", event: "pull_request", action: "review_requested",
			kind: KindReviewRequested, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + "#2:review-requested:octocat", coalesce: "github:" + repo + "#2:review-requested", net: "github:" + repo + "#2:review:octocat requested removed"},
		{golden: "review_requested_team", event: "pull_request", action: "review_requested",
			mutate: func(m map[string]any) {
				delete(m, "requested_reviewer")
				m["requested_team"] = map[string]any{"id": 1, "name": "Bots", "slug": "bots"}
			},
			kind: KindReviewRequested, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + "#2:review-requested:team:bots", coalesce: "github:" + repo + "#2:review-requested", net: "github:" + repo + "#2:review:team:bots requested removed"},
		{golden: "review_request_removed", event: "pull_request", action: "review_request_removed",
			kind: KindReviewRemoved, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:review-request-removed:octocat", coalesce: "github:" + repo + "#2:review-request-removed",
			net: "github:" + repo + "#2:review:octocat removed removed"},
		{golden: "review_commented", event: "pull_request_review", action: "submitted", kind: KindPRReview, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:pr-review:237895671", coalesce: "github:" + repo + "#2:pr-review"},
		{golden: "review_changes_requested", event: "pull_request_review", action: "submitted",
			mutate: func(m map[string]any) {
				set(m, "review.state", "changes_requested")
				set(m, "review.body", "Please add a test for the <b>empty</b> case.<!-- hidden note -->")
			},
			kind: KindPRReview, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + "#2:pr-review:237895671", coalesce: "github:" + repo + "#2:pr-review"},
		{golden: "review_approved", event: "pull_request_review", action: "submitted",
			mutate: func(m map[string]any) { set(m, "review.state", "approved") },
			kind:   KindPRReview, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:pr-review:237895671", coalesce: "github:" + repo + "#2:pr-review"},
		{golden: "review_comment", event: "pull_request_review_comment", action: "created", kind: KindComment, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:comment:284312630", coalesce: "github:" + repo + "#2:comment"},
		{golden: "review_comment_edited", event: "pull_request_review_comment", action: "edited", kind: KindComment, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#2:comment:284312630", coalesce: "github:" + repo + "#2:comment"},
		{golden: "issue_comment", event: "issue_comment", action: "created", kind: KindComment, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#1:comment:492700400", coalesce: "github:" + repo + "#1:comment"},
		{golden: "issue_comment_edited", event: "issue_comment", action: "edited", kind: KindComment, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#1:comment:492700400", coalesce: "github:" + repo + "#1:comment"},
		{golden: "issue_comment_mention_on_pr", event: "issue_comment", action: "created",
			mutate: func(m map[string]any) {
				set(m, "comment.body", "@octocat can you take this one?\n<details><summary>log</summary>\n\nnoise\n</details>")
				set(m, "issue.pull_request", map[string]any{"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/1"})
			},
			kind: KindComment, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + "#1:comment:492700400", coalesce: "github:" + repo + "#1:comment"},
		{golden: "issue_opened", event: "issues", action: "opened",
			filter: func(m map[string]any) bool { return get(m, "issue.body") != nil },
			kind:   KindIssueOpened, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#1:issue-opened:444500041", coalesce: "github:" + repo + "#1:issue-opened", net: "github:" + repo + "#1:issue open"},
		{golden: "issue_closed", event: "issues", action: "reopened",
			mutate: func(m map[string]any) {
				m["action"] = "closed"
				set(m, "issue.state", "closed")
				set(m, "issue.state_reason", "completed")
			},
			kind: KindIssueClosed, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#1:issue-closed:444500041", coalesce: "github:" + repo + "#1:issue-closed", net: "github:" + repo + "#1:issue closed"},
		{golden: "issue_reopened", event: "issues", action: "reopened", kind: KindIssueReopened, priority: inbox.PriorityMedium,
			dedupe: "github:" + repo + "#1:issue-reopened:444500041", coalesce: "github:" + repo + "#1:issue-reopened", net: "github:" + repo + "#1:issue open"},
		{golden: "issue_assigned", event: "issues", action: "assigned",
			mutate: func(m map[string]any) { set(m, "assignee.login", "octocat") },
			kind:   KindIssueAssigned, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + "#1:issue-assigned:octocat", coalesce: "github:" + repo + "#1:issue-assigned"},
		{golden: "push_default_branch", event: "push",
			filter: func(m map[string]any) bool { return m["ref"] == "refs/heads/master" },
			kind:   KindPush, priority: inbox.PriorityLow,
			dedupe:   "github:" + repo + "@master:push:6113728f27ae82c7b1a177c8d03f9e96e0adf246",
			coalesce: "github:" + repo + "@master:push"},
		{golden: "deploy_failure", event: "deployment_status",
			filter: func(m map[string]any) bool { return get(m, "deployment_status.state") == "success" },
			mutate: func(m map[string]any) {
				set(m, "deployment_status.state", "failure")
				set(m, "deployment_status.description", "Health check failed on 2 of 3 instances")
			},
			kind: KindDeployFailure, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + ":deploy-failure:production:209916254", coalesce: "github:" + repo + ":deploy-failure:production"},
		{golden: "deploy_error", event: "deployment_status",
			filter: func(m map[string]any) bool { return get(m, "deployment_status.state") == "success" },
			mutate: func(m map[string]any) { set(m, "deployment_status.state", "error") },
			kind:   KindDeployFailure, priority: inbox.PriorityHigh,
			dedupe: "github:" + repo + ":deploy-failure:production:209916254", coalesce: "github:" + repo + ":deploy-failure:production"},
		{golden: "release_published", event: "release", action: "published", kind: KindRelease, priority: inbox.PriorityLow,
			dedupe: "github:" + repo + ":release:17372790", coalesce: "github:" + repo + ":release"},
		{golden: "dependabot_alert", event: "dependabot_alert", action: "created", kind: KindSecurityAlert, priority: inbox.PriorityHigh,
			dedupe:   "github:wolfy1339/pika-pack:security-alert:dependabot#20:created",
			coalesce: "github:wolfy1339/pika-pack:security-alert:dependabot#20"},
		{golden: "code_scanning_alert", event: "code_scanning_alert", action: "created", kind: KindSecurityAlert, priority: inbox.PriorityHigh,
			dedupe:   "github:Codertocat/Hello-World:security-alert:code-scanning#10:created",
			coalesce: "github:Codertocat/Hello-World:security-alert:code-scanning#10"},
		{golden: "secret_scanning_alert", index: "ghes-35", event: "secret_scanning_alert", action: "reopened",
			mutate: func(m map[string]any) { m["action"] = "created" },
			kind:   KindSecurityAlert, priority: inbox.PriorityUrgent,
			dedupe:   "github:Codertocat/Hello-World:security-alert:secret-scanning#191:created",
			coalesce: "github:Codertocat/Hello-World:security-alert:secret-scanning#191"},
	}
}

// TestMappedEvents posts one real example of every mapped event, signed, through
// the echo stack and checks the notification it becomes.
func TestMappedEvents(t *testing.T) {
	indexes := map[string]map[string][]json.RawMessage{}
	for _, tc := range mappingCases() {
		t.Run(tc.golden, func(t *testing.T) {
			index := tc.index
			if index == "" {
				index = "api.github.com"
			}
			if indexes[index] == nil {
				indexes[index] = examples(t, index)
			}
			h := newHarness(t, testConfig(), 0)
			if tc.prior != nil {
				m := pick(t, indexes[index], tc.event, tc.action, tc.filter)
				tc.prior(m)
				rec := h.deliver(tc.event, "prior-"+tc.golden, encode(t, m))
				require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			}
			m := pick(t, indexes[index], tc.event, tc.action, tc.filter)
			if tc.mutate != nil {
				tc.mutate(m)
			}
			rec := h.deliver(tc.event, "delivery-"+tc.golden, encode(t, m))
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			out := decodeOutcome(t, rec)
			assert.Equal(t, inbox.EventRouted, out.Status)
			assert.Equal(t, 1, out.Records)

			call, ok := h.fake.Last()
			require.True(t, ok)
			require.Len(t, call.Notifications, 1)
			n := call.Notifications[0]
			assert.Equal(t, "github", n.Source)
			assert.Equal(t, tc.kind, n.Kind)
			assert.Equal(t, tc.priority, n.Priority)
			assert.Equal(t, tc.dedupe, n.DedupeKey)
			assert.Equal(t, tc.coalesce, n.CoalesceKey)
			assert.Equal(t, tc.net, strings.TrimSpace(n.NetKey+" "+n.State+" "+n.RestState), "net-state lane")
			assert.Equal(t, VerifiedBy, n.Metadata[connectors.MetaVerifiedBy])
			assert.NotEmpty(t, n.Attributes.String("repo"))
			assert.Equal(t, n.Attributes.String("repo"), n.Thread.Resource)
			assert.NotContains(t, n.Summary, "{", "summaries never carry raw JSON")
			assert.NoError(t, n.Validate())
			checkGolden(t, tc.golden, n.Summary)
		})
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got+"\n"), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./connectors/github -run TestMappedEvents -update")
	assert.Equal(t, strings.TrimSuffix(string(want), "\n"), got)
}

// TestUnmappedEvents stores events the connector does not map and answers 202.
func TestUnmappedEvents(t *testing.T) {
	ex := examples(t, "api.github.com")
	for _, tc := range []struct {
		event, action string
		filter        func(map[string]any) bool
		mutate        func(map[string]any)
	}{
		{event: "issues", action: "labeled"},
		{event: "pull_request", action: "labeled"},
		{event: "check_run", action: "created"},
		{event: "discussion", action: "answered"},
		{event: "package", action: "published"},
		{event: "issue_comment", action: "deleted"},
		{event: "star", action: "created"},
		{event: "push", filter: func(m map[string]any) bool { return m["ref"] == "refs/tags/simple-tag" }},
		{event: "deployment_status", filter: func(m map[string]any) bool { return get(m, "deployment_status.state") == "success" }},
		{event: "release", action: "created"},
		{event: "dependabot_alert", action: "fixed"},
		// A review request for someone else.
		{event: "pull_request", action: "review_requested", mutate: func(m map[string]any) { set(m, "requested_reviewer.login", "someone") }},
	} {
		t.Run(tc.event+"/"+tc.action, func(t *testing.T) {
			h := newHarness(t, testConfig(), 0)
			m := pick(t, ex, tc.event, tc.action, tc.filter)
			if tc.mutate != nil {
				tc.mutate(m)
			}
			rec := h.deliver(tc.event, "d-1", encode(t, m))
			require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
			out := decodeOutcome(t, rec)
			assert.Equal(t, inbox.EventIgnored, out.Status)
			call, ok := h.fake.Last()
			require.True(t, ok, "event stored")
			assert.Empty(t, call.Notifications)
			assert.Equal(t, inbox.EventIgnored, call.Event.Status)
		})
	}
}
