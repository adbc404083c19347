package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// `gateway explain` builds its policy with the config's time intervals and names the
// interval that mutes (one always active, so the wall clock the command reads does
// not matter).
func TestExplainCommandNamesMutingInterval(t *testing.T) {
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, cliConfig+`
time_intervals:
  - name: always
    time_intervals: [{}]
policy:
  rules:
    - match: { source: generic }
      mute_time_intervals: [always]
`)
	sample := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(sample, []byte(`{"source":"generic","connector":"billing",
		"headers":{"webhook-id":"msg_1"},"body":{"kind":"invoice-failed","summary":"Invoice 7 failed","attributes":{"customer":"acme"}}}`), 0o600))
	code, stdout, stderr := runCLI(t, nil, "explain", "--config", cfgPath, sample)
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `\n  decision:   deliver — muted by interval always \(rule\[0\]\) until \S+; default: medium priority, thread idle → deliver now \(wakes\)\n`, stdout)
}

// `gateway check` shows where each rule applies and where it is held.
func TestCheckShowsTimeIntervals(t *testing.T) {
	path := writeConfig(t, t.TempDir(), cliConfig+`
time_intervals:
  - name: nights
    time_intervals: [{times: [{start_time: "00:00", end_time: "07:00"}]}]
  - name: business_hours
    time_intervals: [{weekdays: ["monday:friday"]}]
policy:
  rules:
    - mute_time_intervals: [nights]
    - active_time_intervals: [business_hours]
      mute_time_intervals: [nights]
      action: deliver
`)
	code, stdout, stderr := runCLI(t, nil, "check", "--config", path)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "  - rule[0] → what the layers below decide, held in nights\n")
	require.Contains(t, stdout, "  - rule[1] → deliver now, only in business_hours, held in nights\n")
}
