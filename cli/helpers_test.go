package cli

import (
	"testing"

	"github.com/signalgate/signalgate/gateway"
	"github.com/signalgate/signalgate/gateway/gatewaytest"
)

const billingSecret = gatewaytest.BillingSecret

// minimal is a config with one agent whose token is $CODER_TOKEN.
const minimal = `
agents:
  - id: coder
    token: "${CODER_TOKEN}"
`

func noEnv(string) (string, bool) { return "", false }

// env is a lookup of the variables kv names, in pairs.
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	return gatewaytest.WriteConfig(t, dir, extra)
}

func postGeneric(t *testing.T, m *gateway.Gateway, id string, body []byte, sign bool) (int, map[string]any) {
	t.Helper()
	return gatewaytest.PostGeneric(t, m.Addr().String(), id, body, sign, nil)
}
