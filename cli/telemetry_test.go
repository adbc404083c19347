package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckSaysWhereSpansGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(path, []byte(minimal+`
telemetry: { traces: { endpoint: "http://collector:4317", protocol: grpc, headers: { x-api-key: hdr-secret-0123456789 } } }
`), 0o600))
	lookup := env("CODER_TOKEN", "a-long-enough-token")
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"check", "--config", path}, &out, &errOut, lookup), errOut.String())
	require.Contains(t, out.String(), "tracing:  OTLP grpc to http://collector:4317\n")
	require.NotContains(t, out.String(), "hdr-secret-0123456789")

	out.Reset()
	require.Equal(t, exitOK, run(context.Background(), []string{"check", "--config", path}, &out, &errOut,
		env("CODER_TOKEN", "a-long-enough-token", "OTEL_SDK_DISABLED", "true")), errOut.String())
	require.Contains(t, out.String(), "tracing:  off\n")

	out.Reset()
	code := run(context.Background(), []string{"check", "--config", path}, &out, &errOut,
		env("CODER_TOKEN", "a-long-enough-token", "OTEL_TRACES_EXPORTER", "zipkin"))
	require.Equal(t, exitConfig, code)
	require.Contains(t, errOut.String(), `telemetry: OTEL_TRACES_EXPORTER: "zipkin" is not supported`)
}
