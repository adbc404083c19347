package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/silence"
)

// gateway explain reads the database's silences and names the one that would hold the
// event.
func TestExplainNamesTheSilence(t *testing.T) {
	dir := t.TempDir()
	m, cfgPath := startMainAt(t, dir, cliConfig)
	sil, err := m.Silences.Create(context.Background(), silence.Input{Matchers: []silence.Matcher{{Name: "thread", Value: "acme"}},
		EndsAt: time.Now().Add(time.Hour), CreatedBy: "ops", Comment: "acme migration"})
	require.NoError(t, err)
	sample := filepath.Join(dir, "event.json")
	require.NoError(t, os.WriteFile(sample, []byte(`{"source":"generic","connector":"billing",
		"headers":{"webhook-id":"msg_1"},"body":{"kind":"invoice-failed","summary":"Invoice 7 failed","attributes":{"customer":"acme"}}}`), 0o600))
	code, stdout, stderr := runCLI(t, nil, "explain", "--config", cfgPath, sample)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "silenced by "+sil.ID+"; ")
}
