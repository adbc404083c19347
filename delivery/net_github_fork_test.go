package delivery_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// forkRun is octokit's completed workflow_run example on octo-org/octo-repo master with no
// pull request, with conclusion; for fork > 0 edited into what GitHub sends for a fork
// pull request's run: the fork as head_repository, its own branch named master too.
func forkRun(t *testing.T, fork int, conclusion string) []byte {
	t.Helper()
	ex := octokitExample(t, "workflow_run", func(ex map[string]any) bool {
		run := ex["workflow_run"].(map[string]any)
		prs, _ := run["pull_requests"].([]any)
		return ex["action"] == "completed" && run["conclusion"] == "success" && run["head_branch"] == "master" && len(prs) == 0 &&
			run["head_repository"].(map[string]any)["full_name"] == ex["repository"].(map[string]any)["full_name"]
	})
	run := ex["workflow_run"].(map[string]any)
	run["conclusion"] = conclusion
	if fork > 0 {
		head := run["head_repository"].(map[string]any)
		head["full_name"] = fmt.Sprintf("fork%d/octo-repo", fork)
		head["owner"].(map[string]any)["login"] = fmt.Sprintf("fork%d", fork)
		run["head_sha"] = strings.Repeat(fmt.Sprint(fork), 40)
	}
	b, err := json.Marshal(ex)
	require.NoError(t, err)
	return b
}

// forkCheck is octokit's completed check run or suite example with conclusion, its pull
// request taken away: on the base repository's branch master (fork 0) or in the shape
// GitHub documents for a fork's commit (no branch, no pull request; each fork its commit).
func forkCheck(t *testing.T, event string, fork int, conclusion string) []byte {
	t.Helper()
	ex := octokitExample(t, event, func(ex map[string]any) bool {
		return ex["action"] == "completed" && ex[event].(map[string]any)["conclusion"] == "success"
	})
	obj := ex[event].(map[string]any)
	suite := obj
	if event == "check_run" {
		suite = obj["check_suite"].(map[string]any)
		obj["pull_requests"] = []any{}
	}
	obj["conclusion"] = conclusion
	suite["pull_requests"] = []any{}
	suite["head_branch"] = "master"
	if fork > 0 {
		suite["head_branch"] = nil
		obj["head_sha"] = strings.Repeat(fmt.Sprint(fork), 40)
	}
	b, err := json.Marshal(ex)
	require.NoError(t, err)
	return b
}

// A fork pull request's run whose branch is named like a base branch is not the base
// branch's CI, end to end on each backend: its pass neither supersedes the base failure
// the agent has not heard of yet nor tells a recovery of one it has; the base lane and
// the connector's memory (in the store) stay the base's; the fork's own failure and
// pass still make a lane of their own.
func TestGitHubForkCIThroughStream(t *testing.T) {
	k := inbox.ThreadKey{Agent: "coder", Resource: "octo-org/octo-repo", Thread: "octo-org/octo-repo#0"}
	const baseLane = "github:octo-org/octo-repo@master:ci:workflow_run:test"
	const forkLane = "github:octo-org/octo-repo@fork1/octo-repo:master:ci:workflow_run:test"

	t.Run("busy: a fork's pass leaves the base failure pending", func(t *testing.T) {
		forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
			post := githubHook(t, e)
			run := e.OpenRun(k)
			post("workflow_run", "d1", forkRun(t, 0, "failure"))
			post("workflow_run", "d2", forkRun(t, 1, "success"))
			settle(e)
			e.FinishRun(k, run.ID)
			settle(e)
			got := fullNotifications(e, k)
			require.Len(t, got, 1, "the base failure reaches the model")
			require.Contains(t, got[0].Signal.Contents, `"test" failed on octo-org/octo-repo branch master`)

			recs, err := store.NewRecords(e.Store).ThreadRecords(t.Context(), k)
			require.NoError(t, err)
			require.Len(t, recs, 2)
			require.Equal(t, baseLane, recs[0].NetKey)
			require.Equal(t, inbox.StatusDelivered, recs[0].Status)
			require.Equal(t, github.KindCIPassed, recs[1].Kind, recs[1].Summary)
			require.Equal(t, forkLane, recs[1].NetKey)
			require.Equal(t, inbox.StatusSuperseded, recs[1].Status)
			require.Equal(t, "net state unchanged: success", recs[1].Reason)
		})
	})

	t.Run("idle: a fork's pass is no recovery of the base failure; the base's own pass is", func(t *testing.T) {
		forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
			post := githubHook(t, e)
			post("workflow_run", "d1", forkRun(t, 0, "failure"))
			settle(e)
			got := fullNotifications(e, k)
			require.Len(t, got, 1)
			e.FinishRun(k, got[0].RunID)
			post("workflow_run", "d2", forkRun(t, 1, "success"))
			settle(e)
			require.Len(t, fullNotifications(e, k), 1, "the fork's pass reaches nothing")
			post("workflow_run", "d3", forkRun(t, 0, "success"))
			settle(e)
			got = fullNotifications(e, k)
			require.Len(t, got, 2)
			require.Contains(t, got[1].Signal.Contents, `"test" passed again on octo-org/octo-repo branch master`)
		})
	})

	t.Run("a fork's own failure and recovery", func(t *testing.T) {
		forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
			post := githubHook(t, e)
			post("workflow_run", "d1", forkRun(t, 1, "failure"))
			settle(e)
			got := fullNotifications(e, k)
			require.Len(t, got, 1)
			require.Contains(t, got[0].Signal.Contents, `"test" failed on fork1/octo-repo branch master, a fork of octo-org/octo-repo`)
			e.FinishRun(k, got[0].RunID)
			post("workflow_run", "d2", forkRun(t, 1, "success"))
			settle(e)
			got = fullNotifications(e, k)
			require.Len(t, got, 2)
			require.Contains(t, got[1].Signal.Contents, `"test" passed again on fork1/octo-repo branch master`)
			recs, err := store.NewRecords(e.Store).ThreadRecords(t.Context(), k)
			require.NoError(t, err)
			for _, r := range recs {
				require.Equal(t, forkLane, r.NetKey)
			}
		})
	})

	for _, event := range []string{"check_run", "check_suite"} {
		t.Run(event+" busy: a fork's pass supersedes neither the base's failure nor another fork's", func(t *testing.T) {
			k := inbox.ThreadKey{Agent: "coder", Resource: "Codertocat/Hello-World", Thread: "Codertocat/Hello-World#0"}
			forBackends(t, deliverytest.Config{}, func(t *testing.T, e *deliverytest.Env) {
				post := githubHook(t, e)
				run := e.OpenRun(k)
				post(event, "d1", forkCheck(t, event, 0, "failure"))
				post(event, "d2", forkCheck(t, event, 1, "failure"))
				post(event, "d3", forkCheck(t, event, 2, "success"))
				settle(e)
				e.FinishRun(k, run.ID)
				settle(e)
				got := fullNotifications(e, k)
				require.Len(t, got, 2, "both failures reach the model")
				require.Contains(t, got[0].Signal.Contents, "on Codertocat/Hello-World branch master")
				require.Contains(t, got[1].Signal.Contents, "on Codertocat/Hello-World commit 1111111")
				recs, err := store.NewRecords(e.Store).ThreadRecords(t.Context(), k)
				require.NoError(t, err)
				require.Len(t, recs, 3)
				require.Equal(t, github.KindCIPassed, recs[2].Kind, recs[2].Summary)
				require.Equal(t, inbox.StatusSuperseded, recs[2].Status)
				require.Equal(t, "net state unchanged: success", recs[2].Reason)
			})
		})
	}
}
