package agent_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
)

// A busy key names what each priority does, an unset one taking the default; a word the
// kind does not know is refused by its key.
func TestBusyByPriority(t *testing.T) {
	b := agent.Busy{Urgent: "send", Default: "wait"}
	require.Equal(t, "send", b.For("urgent"))
	for _, p := range []string{"high", "medium", "low", "", "bogus"} {
		require.Equal(t, "wait", b.For(p), p)
	}
	require.Empty(t, b.Check("choice", "wait", "send"))
	errs := agent.Busy{High: "queue", Default: "drop"}.Check("strategy", "enqueue", "interrupt", "reject")
	require.Len(t, errs, 2)
	require.EqualError(t, errs[0], `busy.high: unknown strategy "queue" (want enqueue, interrupt or reject)`)
	require.EqualError(t, errs[1], `busy.default: unknown strategy "drop" (want enqueue, interrupt or reject)`)
}
