package load

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSignedTrafficVerifies sends every source through the verify-only handler, which
// checks signatures with the connectors' own code: any 401 means the generator signs
// differently from what a gateway accepts.
func TestSignedTrafficVerifies(t *testing.T) {
	h, err := VerifyOnly(DefaultScenario())
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := Run(context.Background(), Config{URLs: []string{srv.URL}, Events: 300, Threads: 7, Clients: 4, Subscribers: -1})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"200": 300}, res.Status)
	require.Len(t, res.AckedMarkers, 300)
	require.Positive(t, res.ReqPerSec)
}

func TestThreadsFollowRoutes(t *testing.T) {
	s := DefaultScenario()
	sources := []string{SourceGitHub, SourceSlack, SourceGeneric}
	src, k := s.ThreadFor(4, sources)
	require.Equal(t, SourceSlack, src)
	require.Equal(t, "slack:T0LOAD", k.Resource)
	require.Equal(t, "CLG0000004", k.Thread)
	src, k = s.ThreadFor(3, sources)
	require.Equal(t, SourceGitHub, src)
	require.Equal(t, "loadgen/r3", k.Thread)
}

func TestLoopbackOnly(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8080", "http://localhost:1", "http://[::1]:9"} {
		require.NoError(t, loopbackOnly(ok), ok)
	}
	for _, bad := range []string{"http://10.0.0.1:80", "http://example.com", "ftp://127.0.0.1", "127.0.0.1:80"} {
		require.Error(t, loopbackOnly(bad), bad)
	}
}
