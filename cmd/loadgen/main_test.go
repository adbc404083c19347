package main

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestScenarioSetsOnlyWhatIsNotGiven(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	events := fs.Int("events", 10, "")
	threads := fs.Int("threads", 100, "")
	subs := fs.Int("subscribers", 0, "")
	clients := fs.Int("clients", 16, "")
	require.NoError(t, fs.Parse([]string{"--events", "500"}))
	require.NoError(t, applyScenario(fs, "threads10k"))
	require.Equal(t, 500, *events, "an explicit flag wins")
	require.Equal(t, 10000, *threads)
	require.Equal(t, 1000, *subs)
	require.Equal(t, 32, *clients)
	require.ErrorContains(t, applyScenario(fs, "nope"), `unknown "nope"`)
}
