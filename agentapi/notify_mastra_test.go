package agentapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/deliverytest"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// TestNotificationMastraShape: POST …/notifications answers Mastra's fields (accepted,
// notificationId, record, decision.code) beside the gateway's, keeps sourceId on the
// record, and the record carries Mastra's flat names.
func TestNotificationMastraShape(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	var out map[string]any
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k),
		`{"source": "github", "sourceId": "PR-42", "kind": "review", "summary": "review requested", "priority": "high"}`, &out))
	require.Equal(t, true, out["accepted"], "an idle thread's high notification is delivered now")
	require.Equal(t, out["recordId"], out["notificationId"])
	require.Equal(t, "idle-high", out["decision"].(map[string]any)["code"])
	require.NotEmpty(t, out["decision"].(map[string]any)["reason"], "the prose reason stays")
	rec := out["record"].(map[string]any)
	require.Equal(t, "PR-42", rec["sourceId"])
	require.Equal(t, k.Thread, rec["threadId"])
	require.Equal(t, k.Resource, rec["resourceId"])
	require.Equal(t, k.Agent, rec["agentId"])
	require.Equal(t, float64(0), rec["deliveryAttempts"])
	require.Equal(t, out["recordId"], rec["id"])

	var low map[string]any
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k),
		`{"source": "github", "kind": "push", "summary": "pushed", "priority": "low"}`, &low))
	require.Equal(t, "idle-low-summary", low["decision"].(map[string]any)["code"])

	// sourceId is bounded like a key, and never hashed: longer is refused.
	var bad errAnswer
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications"), e.Token(k),
		`{"source": "github", "kind": "x", "summary": "y", "sourceId": "`+strings.Repeat("a", 256)+`"}`, &bad))
	require.Contains(t, bad.Error.Message, "sourceId")

	e.Pass()
	var got map[string]any
	require.Equal(t, http.StatusOK, e.Do(http.MethodGet, e.ThreadURL(k, "/notifications/"+out["recordId"].(string)), e.Token(k), nil, &got))
	require.Equal(t, "delivered", got["status"])
	require.NotEmpty(t, got["deliveredAt"])
	require.NotEmpty(t, got["lastDeliveryAttemptAt"])
	require.Equal(t, float64(1), got["deliveryAttempts"])
	var seen map[string]any
	require.Equal(t, http.StatusOK, e.Do(http.MethodPost, e.ThreadURL(k, "/notifications/"+out["recordId"].(string)+"/seen"), e.Token(k), nil, &seen))
	require.NotEmpty(t, seen["seenAt"])
}

// TestNotificationBatch: a JSON array creates each notification and answers an array of
// results in input order; a bad item refuses the whole batch naming its index, as does
// an empty or over-long array.
func TestNotificationBatch(t *testing.T) {
	e := deliverytest.New(t, deliverytest.Config{})
	k := coderThread
	u := e.ThreadURL(k, "/notifications")
	var out []map[string]any
	require.Equal(t, http.StatusCreated, e.Do(http.MethodPost, u, e.Token(k), `[
		{"source": "github", "sourceId": "7", "kind": "ci", "summary": "first", "dedupeKey": "k"},
		{"source": "slack", "sourceId": "1700000000.1", "kind": "mention", "summary": "second"},
		{"source": "github", "sourceId": "8", "kind": "ci", "summary": "third", "dedupeKey": "k"}]`, &out))
	require.Len(t, out, 3)
	require.Equal(t, "third", out[0]["record"].(map[string]any)["summary"], "the stored record, after the batch's merge")
	require.Equal(t, "1700000000.1", out[1]["record"].(map[string]any)["sourceId"])
	require.Equal(t, false, out[0]["merged"])
	require.Equal(t, true, out[2]["merged"], "the third merges into the first by dedupeKey, whatever its sourceId")
	require.Equal(t, out[0]["recordId"], out[2]["recordId"])
	require.Equal(t, out[0]["eventId"], out[1]["eventId"], "one event")

	var bad errAnswer
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, u, e.Token(k),
		`[{"source": "github", "kind": "ci", "summary": "ok"}, {"source": "github", "summary": "no kind"}]`, &bad))
	require.Contains(t, bad.Error.Message, "[1]")
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, u, e.Token(k), `[]`, &bad))
	require.Equal(t, http.StatusBadRequest, e.Do(http.MethodPost, u, e.Token(k),
		"["+strings.TrimSuffix(strings.Repeat(`{"kind": "x", "summary": "y"},`, 101), ",")+"]", &bad))
	require.Contains(t, bad.Error.Message, "100")
	recs, err := store.NewRecords(e.Store).ThreadRecords(t.Context(), k)
	require.NoError(t, err)
	require.Len(t, recs, 2, "refused batches store nothing")

	// A batch retried with its Idempotency-Key is a duplicate of the whole.
	var again []map[string]any
	body := `[{"kind": "a", "summary": "one"}, {"kind": "b", "summary": "two"}]`
	require.Equal(t, http.StatusCreated, doKeyed(t, e, k, body, "batch-1", &again))
	require.Equal(t, http.StatusOK, doKeyed(t, e, k, body, "batch-1", &again))
	require.Len(t, again, 2)
	require.Equal(t, true, again[1]["duplicate"])

	// A notification redelivered under its deliveryId decided nothing: no decision.
	var first, dup map[string]any
	one := `{"kind": "c", "summary": "three", "deliveryId": "d-1"}`
	require.Equal(t, http.StatusCreated, doKeyed(t, e, k, one, "", &first))
	require.Contains(t, first, "decision")
	require.Equal(t, http.StatusOK, doKeyed(t, e, k, one, "", &dup))
	require.Equal(t, true, dup["duplicate"])
	require.NotContains(t, dup, "decision", "a duplicate decided nothing")
	require.Equal(t, false, dup["accepted"])
}

func doKeyed(t *testing.T, e *deliverytest.Env, k inbox.ThreadKey, body, key string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.ThreadURL(k, "/notifications"), strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.Token(k))
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	return resp.StatusCode
}

type errAnswer struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}
