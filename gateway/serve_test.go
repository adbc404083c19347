package gateway

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/gateway/gatewaytest"
	"github.com/signalgate/signalgate/store/storetest"
)

func writeConfig(t *testing.T, dir, extra string) string {
	t.Helper()
	return gatewaytest.WriteConfig(t, dir, extra)
}

func TestGatewayInProcess(t *testing.T) {
	dir := t.TempDir()
	cfg, err := LoadConfig(writeConfig(t, dir, ""), noEnv)
	require.NoError(t, err)
	m := New(cfg, storetest.Logger(t))
	require.NoError(t, m.Open(context.Background()))
	defer func() { require.NoError(t, m.Close()) }()
	resp, err := http.Get("http://" + m.Addr().String() + "/nope")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.JSONEq(t, `{"error":{"code":"not_found","message":"Not Found"}}`, string(body))
}
