package gateway

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/cmd/loadgen/load"
	"github.com/signalgate/signalgate/store/storetest"
)

// What `loadgen storm-config` prints, tuned or not, is a valid gateway config.
func TestStormConfigs(t *testing.T) {
	for _, tuned := range []bool{false, true} {
		raw := "server: { listen: \"127.0.0.1:0\" }\n" + load.DefaultStormScenario().GatewayConfig(tuned)
		cfg, err := ParseConfig("storm.yaml", []byte(raw), noEnv)
		require.NoError(t, err)
		require.Len(t, cfg.Routes, 4)
		require.Equal(t, tuned, cfg.Agents[0].WakeBudget != nil)
	}
}

// The storm end to end, compressed into a few seconds against a real gateway process:
// every event is acknowledged, both urgent alerts reach their thread's stream, and every
// event that made a record is accounted for by the agent inbox API. Speed and frame counts are
// `make load`'s to report, not asserted here.
func TestStormHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 1,000 events to a gateway process")
	}
	octokit, err := filepath.Abs("../connectors/github/testdata/octokit")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(octokit, "api.github.com", "index.json")); err != nil {
		t.Skip("testdata/octokit missing: run scripts/fetch-github-examples.sh (make test does)")
	}
	dir := t.TempDir()
	port := freePort(t)
	st := storetest.SQLiteConfig(t)
	path := filepath.Join(dir, "storm.yaml")
	cfg := fmt.Sprintf("server: { listen: \"127.0.0.1:%d\" }\nstorage: { driver: sqlite, dsn: %q }\nlog: { level: warn, format: json }\n%s",
		port, st.DSN, load.DefaultStormScenario().GatewayConfig(true))
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	p := startGateway(t, path)

	res, err := load.RunStorm(context.Background(), load.StormConfig{URL: p.url, OctokitDir: octokit, Window: 4 * time.Second,
		Drain: 3 * time.Second, BusyPeriod: 2 * time.Second, Handle: 200 * time.Millisecond, Tuned: true})
	require.NoError(t, err)
	t.Logf("storm: %+v", res)
	require.Equal(t, load.StormEvents, res.Acked)
	require.Len(t, res.UrgentMs, 2)
	for _, ms := range res.UrgentMs {
		require.GreaterOrEqual(t, ms, 0.0, "each urgent alert reaches its thread's stream")
	}
	// Every event that made a record is accounted for; the rest are the ones a connector
	// mapped to nothing (CI passing on a lane already at rest), which no inbox shows.
	require.Empty(t, res.UnreachableByThread)
	require.Equal(t, res.NoRecord, res.Unreachable)
}

// The storm with agents answering every wake (loadgen storm --replies), compressed: the
// gateway posts each reply once to the fake Slack and GitHub, which send it back as the
// platform's event (a signed `message` from the bot, an issue_comment by the token's user)
// once the gateway shows it sent, and the gateway recognises every one as its own by the
// platform id it recorded: none makes a record, so none adds a frame.
func TestStormRepliesHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 1,000 events to a gateway process")
	}
	octokit, err := filepath.Abs("../connectors/github/testdata/octokit")
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(octokit, "api.github.com", "index.json")); err != nil {
		t.Skip("testdata/octokit missing: run scripts/fetch-github-examples.sh (make test does)")
	}
	dir := t.TempDir()
	port, platform := freePort(t), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	st := storetest.SQLiteConfig(t)
	sc := load.DefaultStormScenario()
	sc.Platform = "http://" + platform
	path := filepath.Join(dir, "storm.yaml")
	cfg := fmt.Sprintf("server: { listen: \"127.0.0.1:%d\" }\nstorage: { driver: sqlite, dsn: %q }\nlog: { level: warn, format: json }\n%s",
		port, st.DSN, sc.GatewayConfig(true))
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	p := startGateway(t, path)

	res, err := load.RunStorm(context.Background(), load.StormConfig{URL: p.url, OctokitDir: octokit, Window: 4 * time.Second,
		Drain: 3 * time.Second, BusyPeriod: 2 * time.Second, Handle: 200 * time.Millisecond, Tuned: true,
		Replies: true, PlatformAddr: platform, EchoDelay: 50 * time.Millisecond, EchoAfterSent: true})
	require.NoError(t, err)
	t.Logf("storm with replies: %+v, replies %+v", res, res.Replies)
	require.Equal(t, load.StormEvents, res.Acked)
	r := res.Replies
	require.Equal(t, res.Frames["wake"], r.Asked, "every wake answered")
	require.Positive(t, r.Posted["slack"], "DMs answered in Slack")
	require.Positive(t, r.Posted["github"], "pull requests answered on GitHub")
	require.Equal(t, r.Queued, r.Posted["slack"]+r.Posted["github"], "each queued reply posted once")
	require.Zero(t, r.Duplicates)
	require.Equal(t, r.Queued, r.Echoed, "each post came back as the platform's event")
	require.Zero(t, r.EchoRecords, "the gateway never hears its own replies")
	require.Empty(t, res.UnreachableByThread)
}
