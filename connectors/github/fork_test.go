package github

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// ciShapes are octokit's completed runs of the three CI events, edited into a run on a
// base branch with no pull request (base) and into the shape GitHub sends for a fork
// pull request's run (fork n): the workflow run names the fork as head_repository and
// keeps the fork's branch name, "master" here like the base's; check runs and suites
// name neither fork nor branch (head_branch null) and differ by commit.
type ciShape struct {
	event      string
	conclusion string // path of the conclusion
	base       func(t *testing.T) map[string]any
	fork       func(m map[string]any, n int)
	baseLane   string
	forkLane   func(n int) string
	forkBranch func(n int) string // the fork run's branch attribute
}

func forkSHA(n int) string { return strings.Repeat(string(rune('a'+n)), 40) }

func ciShapes() []ciShape {
	ex := func(t *testing.T, event string, ok func(map[string]any) bool) map[string]any {
		return pick(t, examples(t, "api.github.com"), event, "completed", ok)
	}
	// checkFork is GitHub's documented shape of a fork's check suite: no branch, no pull request.
	checkFork := func(suite, sha string) func(map[string]any, int) {
		return func(m map[string]any, n int) {
			set(m, suite+".head_branch", nil)
			set(m, suite+".pull_requests", []any{})
			set(m, sha, forkSHA(n))
		}
	}
	return []ciShape{
		{
			event: "workflow_run", conclusion: "workflow_run.conclusion",
			base: func(t *testing.T) map[string]any {
				return ex(t, "workflow_run", func(m map[string]any) bool {
					return get(m, "workflow_run.conclusion") == "success" && hasPRs("workflow_run.pull_requests", false)(m) &&
						get(m, "workflow_run.head_branch") == "master" &&
						get(m, "workflow_run.head_repository.full_name") == get(m, "repository.full_name")
				})
			},
			fork: func(m map[string]any, n int) {
				owner := "fork" + string(rune('0'+n))
				set(m, "workflow_run.head_repository.full_name", owner+"/octo-repo")
				set(m, "workflow_run.head_repository.owner.login", owner)
				set(m, "workflow_run.head_sha", forkSHA(n))
			},
			baseLane: "github:octo-org/octo-repo@master:ci:workflow_run:test",
			forkLane: func(n int) string {
				return "github:octo-org/octo-repo@fork" + string(rune('0'+n)) + "/octo-repo:master:ci:workflow_run:test"
			},
			forkBranch: func(n int) string { return "fork" + string(rune('0'+n)) + "/octo-repo:master" },
		},
		{
			event: "check_run", conclusion: "check_run.conclusion",
			base: func(t *testing.T) map[string]any {
				m := ex(t, "check_run", func(m map[string]any) bool { return get(m, "check_run.conclusion") == "success" })
				set(m, "check_run.pull_requests", []any{})
				set(m, "check_run.check_suite.pull_requests", []any{})
				set(m, "check_run.check_suite.head_branch", "master")
				return m
			},
			fork: func(m map[string]any, n int) {
				checkFork("check_run.check_suite", "check_run.head_sha")(m, n)
				set(m, "check_run.pull_requests", []any{})
			},
			baseLane: "github:Codertocat/Hello-World@master:ci:check_run:Octocoders-linter",
			forkLane: func(n int) string {
				return "github:Codertocat/Hello-World@commit:" + forkSHA(n) + ":ci:check_run:Octocoders-linter"
			},
			forkBranch: func(int) string { return "" },
		},
		{
			event: "check_suite", conclusion: "check_suite.conclusion",
			base: func(t *testing.T) map[string]any {
				m := ex(t, "check_suite", hasPRs("check_suite.pull_requests", false))
				set(m, "check_suite.head_branch", "master")
				return m
			},
			fork:     checkFork("check_suite", "check_suite.head_sha"),
			baseLane: "github:Codertocat/Hello-World@master:ci:check_suite:octocoders-linter",
			forkLane: func(n int) string {
				return "github:Codertocat/Hello-World@commit:" + forkSHA(n) + ":ci:check_suite:octocoders-linter"
			},
			forkBranch: func(int) string { return "" },
		},
	}
}

// TestForkCIIsNotTheBaseBranchs: a fork's run never touches the base branch's lane or CI
// memory (its pass after a base failure is no recovery; a base pass after its failure is
// none either), and each fork's failure and pass still make a recovery in its own lane.
func TestForkCIIsNotTheBaseBranchs(t *testing.T) {
	for _, sh := range ciShapes() {
		t.Run(sh.event, func(t *testing.T) {
			h := newHarness(t, testConfig(), 0)
			n := 0
			deliver := func(fork int, conclusion string) inbox.Notification {
				t.Helper()
				m := sh.base(t)
				if fork > 0 {
					sh.fork(m, fork)
				}
				set(m, sh.conclusion, conclusion)
				n++
				rec := h.deliver(sh.event, "d-"+string(rune('a'+n)), encode(t, m))
				require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
				call, _ := h.fake.Last()
				require.Len(t, call.Notifications, 1)
				return call.Notifications[0]
			}
			expect := func(got inbox.Notification, kind, lane string) {
				t.Helper()
				assert.Equal(t, kind, got.Kind, got.Summary)
				assert.Equal(t, lane, got.NetKey)
			}

			expect(deliver(0, "failure"), KindCIFailure, sh.baseLane)
			pass := deliver(1, "success")
			expect(pass, KindCIPassed, sh.forkLane(1))
			assert.NotContains(t, pass.Summary, "passed again")
			assert.NotContains(t, pass.Summary, "branch master (", "the fork's branch is not told as the base's")
			assert.Equal(t, sh.forkBranch(1), pass.Attributes.String("branch"))

			expect(deliver(1, "failure"), KindCIFailure, sh.forkLane(1))
			expect(deliver(2, "success"), KindCIPassed, sh.forkLane(2)) // another fork's pass answers nothing
			recovered := deliver(1, "success")
			expect(recovered, KindCIRecovered, sh.forkLane(1))
			assert.Contains(t, recovered.Summary, "passed again")

			expect(deliver(0, "success"), KindCIRecovered, sh.baseLane)
			expect(deliver(2, "failure"), KindCIFailure, sh.forkLane(2))
			expect(deliver(0, "success"), KindCIPassed, sh.baseLane) // a fork's failure is not the base's
		})
	}
}

// TestForkCIKeysWithAPullRequest: should a fork's run name its pull request, the lane is
// the pull request's, and the memory is still the fork branch's, not the base's.
func TestForkCIKeysWithAPullRequest(t *testing.T) {
	h := newHarness(t, testConfig(), 0)
	ex := examples(t, "api.github.com")
	ok := func(m map[string]any) bool {
		return get(m, "workflow_run.head_repository.full_name") == get(m, "repository.full_name")
	}
	base := pick(t, ex, "workflow_run", "completed", func(m map[string]any) bool {
		return ok(m) && get(m, "workflow_run.head_branch") == "master" && hasPRs("workflow_run.pull_requests", false)(m)
	})
	set(base, "workflow_run.conclusion", "failure")
	require.Equal(t, http.StatusOK, h.deliver("workflow_run", "d-1", encode(t, base)).Code)

	fork := pick(t, ex, "workflow_run", "completed", func(m map[string]any) bool {
		return ok(m) && get(m, "workflow_run.head_branch") == "master" && hasPRs("workflow_run.pull_requests", true)(m)
	})
	set(fork, "workflow_run.head_repository.full_name", "fork1/octo-repo")
	set(fork, "workflow_run.conclusion", "success")
	rec := h.deliver("workflow_run", "d-2", encode(t, fork))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	call, _ := h.fake.Last()
	require.Len(t, call.Notifications, 1)
	got := call.Notifications[0]
	assert.Equal(t, KindCIPassed, got.Kind, got.Summary)
	assert.Equal(t, "github:octo-org/octo-repo#2:ci:workflow_run:test", got.NetKey)
	assert.Contains(t, got.Summary, "branch fork1/octo-repo:master,")
}
