package gateway

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWakeSettingsParseAndValidate(t *testing.T) {
	cfg, err := ParseConfig("t.yaml", []byte(`
agents:
  - id: coder
    token: dev-only-coder-token
    wake_budget: { max: 6, per: 1h }
    max_concurrent_wakes: 20
`), noEnv)
	require.NoError(t, err)
	require.Equal(t, 6, cfg.Agents[0].WakeBudget.Max)
	require.Equal(t, time.Hour, cfg.Agents[0].WakeBudget.Per)
	require.Equal(t, 20, cfg.Agents[0].MaxConcurrentWakes)

	got := problems(t, `
agents:
  - id: coder
    token: dev-only-coder-token
    wake_budget: { max: 0, per: 500ms }
    max_concurrent_wakes: -1
  - id: support
    token: dev-only-support-token
    wake_budget: { max: 5000, per: 1h }
`, noEnv)
	require.Equal(t, []string{
		"agents[0].wake_budget.max: must be between 1 and 1000",
		"agents[0].wake_budget.per: must be at least 1s",
		"agents[0].max_concurrent_wakes: must be between 0 (no cap) and 100000",
		"agents[1].wake_budget.max: must be between 1 and 1000",
	}, got)
}

func TestWakeBudgetUnknownKeyNamed(t *testing.T) {
	got := problems(t, `
agents:
  - id: coder
    token: dev-only-coder-token
    wake_budget: { max: 5, per: 1h, burst: 2 }
`, noEnv)
	require.Equal(t, []string{"agents[0].wake_budget.burst: unknown key (line 5)"}, got)
}
