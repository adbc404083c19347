package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
)

// A frame handed to live subscribers from memory is written as the same bytes a read of
// the log gives: its data object encoded from the row's JSON texts equals the decoded
// row's encoding, whatever the signal carries (attribute values as a decode gives them:
// strings, booleans, int64 and float64 — a signal's attributes come from decoded records
// or requests).
func TestLoggedFrameEncodesAsTheLogReads(t *testing.T) {
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
	at := time.Date(2026, 11, 26, 21, 0, 0, 123456789, time.UTC)
	attrs := inbox.Attributes{{Key: "repo", Value: "acme/api"}, {Key: "pr", Value: int64(9007199254740993)}, {Key: "ratio", Value: 0.1},
		{Key: "ok", Value: false}, {Key: "html", Value: "<b>&amp;</b>"}}
	full := agent.Frame{Event: agent.EventSignal, ID: "sig-1", Thread: k, RunID: "run-1", Behavior: agent.BehaviorWake,
		Signal: agent.Signal{ID: "sig-1", Type: "notification", TagName: "ci-failure", Contents: "build \x00failed \xff\n<x>",
			Attributes: attrs, Metadata: map[string]any{"traceparent": "00-abc-def-01", "nested": map[string]any{"n": 1.5, "s": "é"}},
			CreatedAt: at, AcceptedAt: at.Add(time.Second),
			Parts:           []agent.Part{{Type: "text", Text: "hello"}, {Type: "file", Data: "aGk=", MediaType: "text/plain", ProviderOptions: map[string]any{"x": true}}},
			ProviderOptions: map[string]any{"anthropic": map[string]any{"cacheControl": "ephemeral"}}},
		XML: "<ci-failure>build failed</ci-failure>", RecordIDs: []string{"r1", "r2"}, CreatedAt: at}
	bare := agent.Frame{Event: agent.EventSignal, ID: "sig-2", Thread: k, Behavior: agent.BehaviorPersist,
		Signal: agent.Signal{ID: "sig-2", Type: "user-message", Contents: "hi"}, CreatedAt: at}
	run := agent.Frame{Event: agent.EventRun, ID: "run-frame-1", Thread: k, RunID: "run-1", RunStatus: "open", Origin: "wake", CreatedAt: at}

	for _, f := range []agent.Frame{full, bare, run, loadSignalFrame(k, at)} {
		f.Seq = 42
		row, err := storedFrameRow(f)
		require.NoError(t, err)
		read, err := row.frame()
		require.NoError(t, err)
		want, err := json.Marshal(read)
		require.NoError(t, err)
		mem, err := row.logged()
		require.NoError(t, err)
		got, err := json.Marshal(mem)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), f.ID)
		require.Equal(t, string(want), string(got), "%s: the same bytes", f.ID)
		require.Equal(t, read.Seq, mem.Seq)
		require.Equal(t, read.Thread, mem.Thread)
		require.Equal(t, read.Event, mem.Event)
	}
}

// loadSignalFrame is a signal frame as the load scenario's GitHub check failures give.
func loadSignalFrame(k inbox.ThreadKey, at time.Time) agent.Frame {
	attrs := inbox.Attributes{{Key: "source", Value: "github"}, {Key: "kind", Value: "check_run.completed"},
		{Key: "repository", Value: "acme/api"}, {Key: "conclusion", Value: "failure"}, {Key: "check_run_id", Value: int64(128620228)},
		{Key: "head_sha", Value: "ec26c3e57ca3a959ca5aad62de7213c562f8c821"}, {Key: "url", Value: "https://github.com/acme/api/runs/128620228"}}
	return agent.Frame{Event: agent.EventSignal, ID: "sig-load", Thread: k, RunID: "run-1", Behavior: agent.BehaviorDeliver,
		Signal: agent.Signal{ID: "sig-load", Type: "notification", TagName: "github-check-run", Contents: "Check run octo-check failed on acme/api at ec26c3e",
			Attributes: attrs, Metadata: map[string]any{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
			CreatedAt: at, AcceptedAt: at},
		XML:       `<github-check-run source="github" kind="check_run.completed">Check run octo-check failed on acme/api at ec26c3e</github-check-run>`,
		RecordIDs: []string{"01JD6Q0000000000000000000"}, CreatedAt: at}
}

// The frame handed to a live subscriber, built from its row and written: decoding the
// row's JSON (as a read of the log does) against encoding from its texts.
func BenchmarkLoggedFrameWritten(b *testing.B) {
	k := inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}
	f := loadSignalFrame(k, time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC))
	f.Seq = 7
	row, err := storedFrameRow(f)
	require.NoError(b, err)
	for _, c := range []struct {
		name  string
		build func() (agent.Frame, error)
	}{{"decoded", row.frame}, {"encoded", row.logged}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fr, err := c.build()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := json.Marshal(fr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
