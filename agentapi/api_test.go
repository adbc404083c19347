package agentapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

const wait = 10 * time.Second

var coderThread = inbox.ThreadKey{Agent: "coder", Resource: "acme/api", Thread: "acme/api#7"}

type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func TestAuth(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	u := e.ThreadURL(k, "/notifications")
	var out apiError

	require.Equal(t, http.StatusUnauthorized, e.Do(http.MethodGet, u, "", nil, &out))
	require.Equal(t, "unauthorized", out.Error.Code)
	require.Equal(t, http.StatusUnauthorized, e.Do(http.MethodGet, u, "wrong-token-0123456789", nil, &out))
	require.Equal(t, http.StatusUnauthorized, e.Do(http.MethodGet, e.ThreadURL(k, "/no-such-path"), "nope", nil, &out),
		"authentication comes before routing")
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Authorization", "Basic "+deliverytest.CoderToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "only bearer tokens")
	require.Equal(t, `Bearer realm="signalgate"`, resp.Header.Get("WWW-Authenticate"))

	other := inbox.ThreadKey{Agent: "support", Resource: "slack:T1", Thread: "dm:U1"}
	require.Equal(t, http.StatusForbidden, e.Do(http.MethodGet, e.ThreadURL(other, "/notifications"), deliverytest.CoderToken, nil, &out))
	require.Equal(t, "forbidden", out.Error.Code)
	require.Equal(t, `the token of agent "coder" cannot access agent "support"'s threads`, out.Error.Message)
	require.Equal(t, http.StatusForbidden, e.Do(http.MethodPost, e.ThreadURL(other, "/runs"), deliverytest.CoderToken, nil, &out))

	ghost := inbox.ThreadKey{Agent: "ghost", Resource: "r", Thread: "t"}
	require.Equal(t, http.StatusNotFound, e.Do(http.MethodGet, e.ThreadURL(ghost, "/stream"), deliverytest.CoderToken, nil, &out))
	require.Equal(t, `unknown agent "ghost"`, out.Error.Message)

	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, u, deliverytest.CoderToken, nil, nil))
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(other, "/notifications"), deliverytest.SupportToken, nil, nil))

	// Nothing was opened on the support thread by the forbidden calls.
	live, err := e.Runs.Live(context.Background(), other)
	require.NoError(t, err)
	require.Nil(t, live)
}

func TestPathIDsAreUnescaped(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	for _, k := range []inbox.ThreadKey{
		coderThread, // %2F and %23: echo routes on the raw path
		{Agent: "coder", Resource: "a b", Thread: "ü"},  // %20 and UTF-8: routed on the decoded path
		{Agent: "coder", Resource: "100%", Thread: "x"}, // %25
	} {
		var out struct {
			RecordID string `json:"recordId"`
		}
		require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), deliverytest.CoderToken,
			map[string]any{"kind": "note", "summary": "hi"}, &out))
		r := e.Record(out.RecordID)
		require.Equal(t, k, r.Thread)
		require.Equal(t, agent.APISource, r.Source)
	}
	// The raw URL as a client would write it.
	var out struct {
		RecordID string `json:"recordId"`
	}
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.Server.URL+"/v1/agents/coder/threads/acme%2Fapi/acme%2Fapi%237/notifications",
		deliverytest.CoderToken, map[string]any{"kind": "note", "summary": "raw"}, &out))
	require.Equal(t, coderThread, e.Record(out.RecordID).Thread)
}

// TestBadInput: every malformed request is a 4xx JSON error naming the problem, and
// nothing is stored.
func TestBadInput(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{Agents: []agent.Config{
		{ID: "coder", Token: deliverytest.CoderToken, MaxContents: 64},
	}})
	k := coderThread
	sig, note := e.ThreadURL(k, "/signals"), e.ThreadURL(k, "/notifications")
	long := strings.Repeat("x", 65)
	tests := []struct {
		name   string
		url    string
		body   any
		status int
		msg    string
	}{
		{"malformed JSON", sig, `{"signal": {"type": "user",`, 400, "malformed JSON"},
		{"syntax error", sig, `{"signal": {"type": user}}`, 400, "malformed JSON at byte"},
		{"wrong field type", sig, `{"signal": {"type": "user", "contents": 5}}`, 400, "signal.contents: want a string or an array"},
		{"trailing data", sig, `{"signal": {"type": "user"}} {}`, 400, "unexpected data after the JSON object"},
		{"empty body", sig, ``, 400, "want a JSON object"},
		{"no signal", sig, `{}`, 400, "signal: required"},
		{"unknown type", sig, `{"signal": {"type": "ci-alert", "contents": "x"}}`, 400, `unknown signal type "ci-alert": use type "reactive" with tagName "ci-alert"`},
		{"invalid tag", sig, `{"signal": {"type": "reactive", "tagName": "1bad", "contents": "x"}}`, 400, `invalid tagName "1bad"`},
		{"invalid attribute name", sig, `{"signal": {"type": "user", "contents": "x", "attributes": {"a b": 1}}}`, 400, `invalid attribute name "a b"`},
		{"nested attribute", sig, `{"signal": {"type": "user", "contents": "x", "attributes": {"a": {"b": 1}}}}`, 400, `attribute "a"`},
		{"oversized contents", sig, `{"signal": {"type": "user", "contents": "` + long + `"}}`, 413, "contents is 65 bytes, over the limit of 64 bytes"},
		{"bad behavior", sig, `{"signal": {"type": "user", "contents": "x"}, "ifIdle": {"behavior": "deliver"}}`, 400, `ifIdle.behavior: unknown "deliver"`},
		{"bad conditional attribute", sig, `{"signal": {"type": "user", "contents": "x"}, "ifActive": {"attributes": {"-x": 1}}}`, 400, "ifActive.attributes"},
		{"state without id", sig, `{"signal": {"type": "state", "contents": "x"}}`, 400, "signal.id: required for a state signal"},
		{"state bad mode", sig, `{"signal": {"type": "state", "id": "ci", "mode": "full"}}`, 400, `signal.mode: unknown "full"`},
		{"cacheKey on user", sig, `{"signal": {"type": "user", "cacheKey": "k"}}`, 400, "cacheKey and mode apply only to type state"},
		{"notification without kind", note, `{"summary": "x"}`, 400, "kind: required"},
		{"notification bad priority", note, `{"kind": "k", "priority": "critical"}`, 400, `priority: unknown priority "critical"`},
		{"notification bad attribute", note, `{"kind": "k", "attributes": {"bad name": "v"}}`, 400, `invalid attribute name "bad name"`},
		{"notification bad payload", note, `{"kind": "k", "payload": nope}`, 400, "malformed JSON"},
		{"notification oversized", note, `{"kind": "k", "summary": "` + long + `"}`, 413, "summary is 65 bytes"},
		{"notification bad deliverAs", note, `{"kind": "k", "deliverAs": "email"}`, 400, `deliverAs: unknown "email"`},
		{"misspelt option", sig, `{"signal": {"type": "user", "contents": "x"}, "ifIdle": {"streamOptons": {}}}`, 400, `unknown field "streamOptons"`},
		{"unknown top-level field", sig, `{"signal": {"type": "user", "contents": "x"}, "ifIdel": {}}`, 400, `unknown field "ifIdel"`},
		{"unknown signal field", sig, `{"signal": {"type": "user", "contents": "x", "tag": "t"}}`, 400, `unknown field "tag"`},
		{"both stream option names", sig, `{"signal": {"type": "user", "contents": "x"}, "ifIdle": {"streamOptions": {}, "runOptions": {}}}`, 400, "not both"},
		{"notification unknown field", note, `{"kind": "k", "dedupe_key": "d"}`, 400, `unknown field "dedupe_key"`},
		{"run unknown field", e.ThreadURL(k, "/runs"), `{"lease": "1m"}`, 400, `unknown field "lease"`},
		{"finish unknown field", e.ThreadURL(k, "/runs/r1/finish"), `{"state": "aborted"}`, 400, `unknown field "state"`},
		{"read unknown field", e.ThreadURL(k, "/notifications/read"), `{"id": ["x"]}`, 400, `unknown field "id"`},
		{"bad cursor", note + "?cursor=zzz!", nil, 400, "cursor: not a cursor this API returned"},
		{"bad status filter", note + "?status=unread", nil, 400, `status: unknown "unread"`},
		{"bad limit", note + "?limit=0", nil, 400, "limit: want 1 to 200"},
		{"bad Last-Event-ID", e.ThreadURL(k, "/stream?after=abc"), nil, 400, "after: want the seq"},
		{"unknown action", e.ThreadURL(k, "/notifications/x/delete"), `{}`, 404, `unknown action "delete"`},
		{"control char in id", e.ThreadURL(inbox.ThreadKey{Agent: "coder", Resource: "a\x01", Thread: "t"}, "/notifications"), nil, 400, "resourceId: contains control characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := http.MethodPost
			if tt.body == nil {
				method = http.MethodGet
			}
			var out apiError
			require.Equal(t, tt.status, e.Do(method, tt.url, deliverytest.CoderToken, tt.body, &out))
			require.Contains(t, out.Error.Message, tt.msg)
			require.NotEmpty(t, out.Error.Code)
		})
	}
	n, err := store.NewAdmin(e.Store).CountEvents(context.Background())
	require.NoError(t, err)
	require.Zero(t, n, "no event stored")
	require.Empty(t, e.Log(k), "no signal logged")
	recs, err := store.NewRecords(e.Store).ThreadRecords(context.Background(), k)
	require.NoError(t, err)
	require.Empty(t, recs)
	live, err := e.Runs.Live(context.Background(), k)
	require.NoError(t, err)
	require.Nil(t, live, "no run opened")
}

type signalAnswer struct {
	Accepted bool           `json:"accepted"`
	ID       string         `json:"id"`
	Action   string         `json:"action"`
	RunID    string         `json:"runId"`
	Signal   map[string]any `json:"signal"`
	Skipped  bool           `json:"skipped"`
	Reason   string         `json:"reason"`
	Version  int            `json:"version"`
}

func send(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, body string) signalAnswer {
	t.Helper()
	var out signalAnswer
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/signals"), e.Token(k), body, &out))
	return out
}

func TestSignalConditionalAttributes(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	sub := e.Subscribe(k, "", "")
	body := `{"signal": {"type": "reactive", "tagName": "ci", "contents": "build red", "attributes": {"repo": "acme/api", "when": "never"}},
		"ifActive": {"attributes": {"when": "active", "interrupt": true}},
		"ifIdle": {"attributes": {"when": "idle"}}}`

	idle := send(t, e, k, body)
	require.Equal(t, "wake", idle.Action)
	run := sub.Next(wait)
	require.Equal(t, "run", run.Event)
	require.Equal(t, "wake", run.Str("origin"))
	require.Equal(t, idle.RunID, run.Str("runId"))
	ev := sub.Next(wait)
	require.Equal(t, idle.ID, ev.Str("id"))
	require.Equal(t, "wake", ev.Str("action"))
	require.Equal(t, `<ci repo="acme/api" when="idle">build red</ci>`, ev.Str("xml"))

	active := send(t, e, k, body)
	require.Equal(t, "deliver", active.Action)
	require.Equal(t, idle.RunID, active.RunID, "delivered into the run the wake opened")
	ev = sub.Next(wait)
	require.Equal(t, "deliver", ev.Str("action"))
	require.Equal(t, idle.RunID, ev.Str("runId"))
	require.Equal(t, `<ci repo="acme/api" when="active" interrupt="true">build red</ci>`, ev.Str("xml"))
	require.Equal(t, map[string]any{"repo": "acme/api", "when": "active", "interrupt": true}, ev.Data["attributes"])
	require.Len(t, e.Log(k), 3)
}

func TestSignalPersistAndDiscard(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	persistIdle := send(t, e, k, `{"signal": {"type": "user", "contents": "fyi"}, "ifIdle": {"behavior": "persist"}}`)
	require.Equal(t, "persist", persistIdle.Action)
	require.Equal(t, persistIdle.ID, persistIdle.RunID, "persist answers the signal id as runId, as Mastra's route")
	discard := send(t, e, k, `{"signal": {"type": "user", "contents": "drop me"}, "ifIdle": {"behavior": "discard"}}`)
	require.Equal(t, "discard", discard.Action)
	require.True(t, discard.Accepted)
	require.Equal(t, discard.ID, discard.RunID)
	require.Equal(t, "drop me", discard.Signal["contents"], "the signal that was discarded")
	log := e.Log(k)
	require.Len(t, log, 1, "discard stores nothing; persist never wakes")
	require.Equal(t, agent.BehaviorPersist, log[0].Behavior)
	require.Equal(t, "fyi", log[0].XML, "a user signal without attributes is plain text")
	live, err := e.Runs.Live(context.Background(), k)
	require.NoError(t, err)
	require.Nil(t, live)

	run := e.OpenRun(k)
	persistActive := send(t, e, k, `{"signal": {"type": "system-reminder", "contents": "tests pass"}, "ifActive": {"behavior": "persist"}}`)
	require.Equal(t, "persist", persistActive.Action)
	require.Equal(t, persistActive.ID, persistActive.RunID)
	require.Equal(t, run.ID, e.Log(k)[2].RunID, "logged in the run")
	discardActive := send(t, e, k, `{"signal": {"type": "user", "contents": "x"}, "ifActive": {"behavior": "discard"}}`)
	require.Equal(t, "discard", discardActive.Action)
	log = e.Log(k)
	require.Len(t, log, 3) // persist, run open, persist
	require.Equal(t, `<system-reminder>tests pass</system-reminder>`, log[2].XML)
	require.Equal(t, agent.TypeReactive, log[2].Signal.Type)

	// A signal id given by the sender is kept, and resending it logs nothing new.
	first := send(t, e, k, `{"signal": {"id": "sig-42", "type": "user", "contents": "once"}}`)
	require.Equal(t, "sig-42", first.ID)
	send(t, e, k, `{"signal": {"id": "sig-42", "type": "user", "contents": "once"}}`)
	require.Len(t, e.Log(k), 4)
}

func TestStateSignalSkip(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	e.OpenRun(k)
	body := `{"signal": {"type": "state", "id": "ci", "contents": "main: green", "cacheKey": "sha-1"}}`
	first := send(t, e, k, body)
	require.Equal(t, "deliver", first.Action)
	require.Equal(t, 1, first.Version)
	again := send(t, e, k, body)
	require.True(t, again.Skipped)
	require.True(t, again.Accepted)
	require.Equal(t, agent.SkipUnchanged, again.Reason)
	require.Equal(t, "discard", again.Action)
	require.Equal(t, 1, again.Version)
	delta := send(t, e, k, `{"signal": {"type": "state", "id": "ci", "contents": "+1 test", "cacheKey": "sha-1", "mode": "delta"}}`)
	require.Empty(t, delta.Skipped)
	require.Equal(t, 2, delta.Version)
	other := send(t, e, k, `{"signal": {"type": "state", "id": "deploy", "contents": "v1", "cacheKey": "sha-1"}}`)
	require.Equal(t, 1, other.Version, "lanes are per state id")

	var states []agent.Frame
	for _, f := range e.Log(k) {
		if f.Event == agent.EventSignal {
			states = append(states, f)
		}
	}
	require.Len(t, states, 3)
	require.Equal(t, "<state>main: green</state>", states[0].XML)
	require.Equal(t, map[string]any{"id": "ci", "version": float64(1), "mode": "snapshot", "cacheKey": "sha-1"}, states[0].Signal.Metadata["state"])
	require.NotEqual(t, states[0].ID, states[1].ID, "each state signal has its own id in the log")
}
