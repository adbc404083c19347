package gateway

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/store/storetest"
)

// TestMailboxPolledByOneReplica: two gateways on one PostgreSQL configured with the same
// mailbox; one polls it, the other stands by, and takes over when the first stops.
// (A replica that dies without stopping frees its lock with its session; the store's
// advisory lock test kills a session to show that.)
func TestMailboxPolledByOneReplica(t *testing.T) {
	dsn := os.Getenv(storetest.PostgresEnv)
	addr, user, password := os.Getenv("SIGNALGATE_TEST_IMAP_ADDR"), os.Getenv("SIGNALGATE_TEST_IMAP_USER"), os.Getenv("SIGNALGATE_TEST_IMAP_PASSWORD")
	if dsn == "" || addr == "" {
		t.Skip("needs " + storetest.PostgresEnv + " and SIGNALGATE_TEST_IMAP_ADDR (run .ci/dovecot.sh)")
	}
	st := storetest.PostgresConfig(t, dsn)
	conf := fmt.Sprintf(`
server: { listen: "127.0.0.1:0", shutdown_grace: 2s }
storage: { driver: postgres, dsn: %q }
log: { level: warn }
agents: [ { id: coder, token: dev-only-coder-token } ]
connectors:
  email: [ { name: support, addr: %q, tls: false, username: %q, password: %q, mailboxes: [INBOX], poll_interval: 1s } ]
`, st.DSN, addr, user, password)
	open := func() *Gateway {
		cfg, err := ParseConfig("replica.yaml", []byte(conf), noEnv)
		require.NoError(t, err)
		m := New(cfg, storetest.Logger(t))
		require.NoError(t, m.Open(context.Background()))
		t.Cleanup(func() { _ = m.Close() }) // Close is idempotent
		return m
	}
	a, b := open(), open()
	state := func(m *Gateway) email.State { return m.Generation().Pollers[0].Status().Mailboxes[0].State }

	var polling, standby *Gateway
	require.Eventually(t, func() bool {
		sa, sb := state(a), state(b)
		switch {
		case sa.Connected() && sb == email.StateStandby:
			polling, standby = a, b
		case sb.Connected() && sa == email.StateStandby:
			polling, standby = b, a
		}
		return polling != nil
	}, 20*time.Second, 20*time.Millisecond, "one replica polls, the other stands by")
	for range 20 { // never both, while both run
		require.False(t, state(a).Connected() && state(b).Connected(), "two replicas polling one mailbox")
	}

	require.NoError(t, polling.Close())
	require.Eventually(t, func() bool { return state(standby).Connected() },
		20*time.Second, 20*time.Millisecond, "the standby takes the mailbox over")
}
