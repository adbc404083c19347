package cli

import (
	"strings"
	"testing"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/inbox"
	"github.com/stretchr/testify/require"
)

func TestExplainPrintsWhen(t *testing.T) {
	k := inbox.ThreadKey{Agent: "coder", Resource: "billing", Thread: "acme"}
	x := &admin.Explanation{Routes: []admin.RouteResult{
		{Route: "big", Matched: true, Thread: &k, When: "payload.amount > 1000"},
		{Route: "small", When: "payload.amount < 10"},
		{Route: "odd", When: `payload.name matches "^x"`, Error: `when "payload.name matches \"^x\"": interface conversion`},
	}}
	var b strings.Builder
	printExplanation(&b, x)
	out := b.String()
	require.Contains(t, out, "  big         matches (when payload.amount > 1000) → coder/billing/acme\n")
	require.Contains(t, out, "  small       no match: when payload.amount < 10 is false\n")
	require.Contains(t, out, "  odd         no match: when \"payload.name matches \\\"^x\\\"\": interface conversion\n")
}
