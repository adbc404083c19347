package gateway

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/store"
)

// Through the real webhook path: routes' and rules' `when` see the event's body as
// `payload`, the record stores which expression decided.
func TestPolicyWhenOnIngest(t *testing.T) {
	m := startMain(t, `
connectors:
  generic: [ { name: billing, secret: "`+billingSecret+`" } ]
routes:
  - name: billing
    match: { source: generic, when: 'payload.kind startsWith "invoice-"' }
    thread: { agent: coder, resource: billing, thread: invoices }
policy:
  rules:
    - when: '(payload.attributes?.amount ?? 0) < 100 && presence == "idle"'
      action: discard
`)
	// In this order: the big invoice is delivered and wakes the thread, after which the
	// small one would no longer find it idle.
	for _, ev := range []struct{ id, body string }{
		{"small", `{"kind":"invoice-failed","summary":"Invoice 7 failed","dedupeKey":"7","attributes":{"amount":20}}`},
		{"big", `{"kind":"invoice-failed","summary":"Invoice 8 failed","dedupeKey":"8","attributes":{"amount":2000}}`},
		{"other", `{"kind":"payout","summary":"Payout sent","dedupeKey":"9"}`},
	} {
		id, body := ev.id, ev.body
		code, out := postGeneric(t, m, id, []byte(body), true)
		if id == "other" {
			require.Equal(t, http.StatusAccepted, code, out)
			require.Equal(t, "unrouted", out["status"], "the route's when is false")
			continue
		}
		require.Equal(t, http.StatusOK, code, out)
	}
	recs, err := store.NewRecords(m.Store).ThreadRecords(context.Background(), inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "invoices"})
	require.NoError(t, err)
	require.Len(t, recs, 2, "the payout matches no route")
	by := map[string]inbox.Record{}
	for _, r := range recs {
		by[r.Summary] = r
	}
	require.Equal(t, inbox.StatusDiscarded, by["Invoice 7 failed"].Status)
	require.Equal(t, `rule[0] when (payload.attributes?.amount ?? 0) < 100 && presence == "idle" → discard`, by["Invoice 7 failed"].Reason)
	require.Equal(t, inbox.ActionDeliver, by["Invoice 8 failed"].Action)
}

// The policy page's expression examples load as written.
func TestDocExpressionExamplesLoad(t *testing.T) {
	doc, err := os.ReadFile("../docs/policy.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "## Expressions")
	require.True(t, ok)
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	require.True(t, ok)
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	require.Contains(t, block, `payload.check_run.name matches "^lint"`)
	cfg, err := ParseConfig("policy.yaml", []byte(minimal+block), env("CODER_TOKEN", "a-long-enough-token"))
	require.NoError(t, err)
	require.Len(t, cfg.Policy.Rules, 3)
}

func TestSummaryFormatNamesKey(t *testing.T) {
	got := problems(t, minimal+`
policy: { summary_format: verbose }
`, env("CODER_TOKEN", "a-long-enough-token"))
	require.Equal(t, []string{`policy.summary_format: unknown "verbose" (want mastra or detailed)`}, got)
}
