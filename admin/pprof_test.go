package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
)

func TestPprofIsOptIn(t *testing.T) {
	en := newEnv(t, envOpts{})
	code, _ := doAuth(en, http.MethodGet, admin.Prefix+"/debug/pprof/heap?debug=1", "Bearer "+opsToken)
	require.Equal(t, http.StatusNotFound, code, "profiles are served only with admin.pprof on")
}

func TestPprofBehindWriteScope(t *testing.T) {
	en := newEnv(t, envOpts{pprof: true})
	heap := admin.Prefix + "/debug/pprof/heap?debug=1"
	code, _ := doAuth(en, http.MethodGet, heap, "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = doAuth(en, http.MethodGet, heap, "Bearer "+viewerToken)
	require.Equal(t, http.StatusForbidden, code)
	code, raw := doAuth(en, http.MethodGet, heap, "Bearer "+opsToken)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(raw), "heap profile:")
	code, raw = doAuth(en, http.MethodGet, admin.Prefix+"/debug/pprof/", "Bearer "+opsToken)
	require.Equal(t, http.StatusOK, code)
	require.True(t, strings.Contains(string(raw), "goroutine"), "the index lists the profiles")
	code, _ = doAuth(en, http.MethodGet, admin.Prefix+"/debug/pprof/no-such-profile", "Bearer "+opsToken)
	require.Equal(t, http.StatusNotFound, code)
	missing, err := admin.MissingFromOpenAPI(en.e.Routes())
	require.NoError(t, err)
	require.Empty(t, missing, "the profiles are Go's, documented by Go, not in our OpenAPI document")
}
