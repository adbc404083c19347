package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// octokitBodies are GitHub's own example deliveries, as they arrive (compact JSON).
func octokitBodies(t testing.TB) [][]byte {
	t.Helper()
	raw, err := os.ReadFile("../connectors/github/testdata/octokit/api.github.com/index.json")
	require.NoError(t, err)
	var events []struct {
		Examples []json.RawMessage `json:"examples"`
	}
	require.NoError(t, json.Unmarshal(raw, &events))
	var bodies [][]byte
	for _, e := range events {
		for _, x := range e.Examples {
			var b bytes.Buffer
			require.NoError(t, json.Compact(&b, x))
			bodies = append(bodies, b.Bytes())
		}
	}
	require.NotEmpty(t, bodies)
	return bodies
}

// BenchmarkIngestGitHubBodies stores real GitHub bodies (octokit's examples, ~10 KB
// on average) with one record each on SQLite, and reports the database pages each
// event adds (PRAGMA page_count) and the CPU it costs.
func BenchmarkIngestGitHubBodies(b *testing.B) {
	ctx := context.Background()
	bodies := octokitBodies(b)
	s := storetest.OpenSQLite(b)
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(b, err)
	svc := inbox.NewService(store.NewInbox(s), pol)
	pages := func() int {
		var n int
		require.NoError(b, s.Writer().GetContext(ctx, &n, `PRAGMA page_count`))
		return n
	}
	b.ReportAllocs()
	p0, cpu0, i := pages(), cpuTime(b), 0
	for b.Loop() {
		ev := event(fmt.Sprintf("d%d", i))
		body := bodies[i%len(bodies)]
		ev.Body, ev.BodyDigest = body, inbox.Digest(append(body, fmt.Sprint(i)...))
		if _, err := svc.Ingest(ctx, ev, []inbox.Notification{comment("Jane commented", fmt.Sprintf("k%d", i), "")}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(pages()-p0)/float64(i), "pages/event")
	b.ReportMetric(float64((cpuTime(b)-cpu0).Microseconds())/float64(i), "cpu-µs/event")
}
