package inbox

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAttributesKeepOrderThroughJSON(t *testing.T) {
	var a Attributes
	require.NoError(t, json.Unmarshal([]byte(`{"z":"1","a":2,"m":true,"f":1.5,"gone":null}`), &a))
	require.Equal(t, Attributes{{"z", "1"}, {"a", int64(2)}, {"m", true}, {"f", 1.5}}, a)
	b, err := json.Marshal(a)
	require.NoError(t, err)
	require.Equal(t, `{"z":"1","a":2,"m":true,"f":1.5}`, string(b))
	require.Error(t, json.Unmarshal([]byte(`{"x":{"nested":1}}`), &a))
	require.Error(t, json.Unmarshal([]byte(`[1]`), &a))
}

func TestAttributesMergeNewWins(t *testing.T) {
	a := Attributes{{"repo", "acme/api"}, {"n", 1}}
	m := a.Merge(Attributes{{"n", 2}, {"url", "u"}, {"repo", nil}})
	require.Equal(t, Attributes{{"n", 2}, {"url", "u"}}, m)
	require.Equal(t, Attributes{{"repo", "acme/api"}, {"n", 1}}, a, "merge must not modify its receiver")
}

func TestRecordMerge(t *testing.T) {
	n := Notification{Thread: ThreadKey{"a", "r", "t"}, Source: "github", Kind: "comment", Summary: "one", DedupeKey: "k"}
	r := NewRecord("r1", "e1", n, Decision{Action: ActionSummarize, SummaryAt: at(0), Reason: "x"}, now)
	require.Equal(t, PriorityMedium, r.Priority)
	require.True(t, r.Mergeable(n))
	other := n
	other.Kind = "pr-review"
	require.False(t, r.Mergeable(other))
	n2 := n
	n2.Summary, n2.Payload = "two", json.RawMessage(`{"b":2}`)
	r.Merge(n2, Decision{Action: ActionDeliver, DeliverAt: at(5), Reason: "y"}, now.Add(5))
	require.Equal(t, 2, r.CoalescedCount)
	require.Equal(t, "two", r.Summary)
	require.Equal(t, json.RawMessage(`{"b":2}`), r.Payload)
	require.Equal(t, at(0), r.SummaryAt, "an earlier due time is kept")
	require.Equal(t, at(5), r.DeliverAt)
	require.Equal(t, at(0), r.DueAt())
	r.Status = StatusDelivered
	require.False(t, r.Mergeable(n))
	require.Nil(t, r.DueAt())
}
