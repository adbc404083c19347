package inbox

import (
	"encoding/json"
	"fmt"
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

// The direct encoding gives json.Marshal's bytes for every key and value, the escaped,
// non-ASCII and invalid ones included, and its error for a value it cannot encode.
func TestAttributesMarshalAsJSONMarshal(t *testing.T) {
	values := []any{"plain", "", "quote\"d", `back\slash`, "<b>&amp;</b>", "tab\there", "nul\x00", "del\x7f", "é ü 日本",
		"line\u2028sep", "bad\xffutf8", int64(-9007199254740993), int64(0), 42, int32(7), 1.5, 0.1, 1e21, float64(3),
		json.Number("12345678901234567890"), true, false, nil, uint64(18446744073709551615)}
	var a Attributes
	for i, v := range values {
		a = append(a, Attribute{Key: fmt.Sprintf("k%d<%v>", i, i%3 == 0), Value: v})
	}
	a = append(a, Attribute{Key: "ключ\"", Value: "v"})
	got, err := json.Marshal(a)
	require.NoError(t, err)
	want := []byte{'{'}
	for i, kv := range a {
		if i > 0 {
			want = append(want, ',')
		}
		k, err := json.Marshal(kv.Key)
		require.NoError(t, err)
		v, err := json.Marshal(kv.Value)
		require.NoError(t, err)
		want = append(append(append(want, k...), ':'), v...)
	}
	want = append(want, '}')
	require.Equal(t, string(want), string(got))

	_, err = json.Marshal(Attributes{{Key: "bad", Value: make(chan int)}})
	require.ErrorContains(t, err, `attribute "bad"`)
}

// BenchmarkAttributesMarshal encodes a GitHub check failure's attributes.
func BenchmarkAttributesMarshal(b *testing.B) {
	a := Attributes{{"source", "github"}, {"kind", "check_run.completed"}, {"repository", "acme/api"},
		{"conclusion", "failure"}, {"check_run_id", int64(128620228)}, {"head_sha", "ec26c3e57ca3a959ca5aad62de7213c562f8c821"},
		{"url", "https://github.com/acme/api/runs/128620228"}, {"draft", false}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(a); err != nil {
			b.Fatal(err)
		}
	}
}
