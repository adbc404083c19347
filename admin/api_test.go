package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
)

// TestAuthEveryRoute walks the routes registered on echo, not a list kept by hand:
// a route added without the group's authentication, or without a declared scope,
// fails here.
func TestAuthEveryRoute(t *testing.T) {
	en := newEnv(t, envOpts{})
	scopes := map[string]string{}
	for _, r := range en.api.Routes() {
		scopes[r.Method+" "+r.Path] = r.Scope
	}
	var checked int
	for _, r := range en.e.Routes() {
		if !strings.HasPrefix(r.Path, admin.Prefix) || r.Method == echo.RouteNotFound {
			continue
		}
		checked++
		key := r.Method + " " + r.Path
		scope, declared := scopes[key]
		require.True(t, declared, "%s is registered but declares no scope", key)
		target := strings.NewReplacer(":id", "some-id").Replace(r.Path)
		t.Run(key, func(t *testing.T) {
			for _, bad := range []string{"", "Bearer", "Bearer ", "Bearer wrong-token-0123456789", "Basic " + opsToken,
				"Bearer " + opsToken + "x", "Bearer " + opsToken[:len(opsToken)-1]} {
				code, raw := doAuth(en, r.Method, target, bad)
				require.Equal(t, http.StatusUnauthorized, code, "Authorization %q", bad)
				require.JSONEq(t, `{"error":{"code":"unauthorized","message":"missing or invalid credentials"}}`, string(raw))
			}
			code, raw := doAuth(en, r.Method, target, "Bearer "+viewerToken)
			if scope == admin.ScopeWrite {
				require.Equal(t, http.StatusForbidden, code, string(raw))
				require.JSONEq(t, `{"error":{"code":"forbidden","message":"admin token \"viewer\" lacks the write scope"}}`, string(raw))
			} else {
				require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, code, string(raw))
			}
			code, raw = doAuth(en, r.Method, target, "bearer "+opsToken)
			require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, code, string(raw))
		})
	}
	require.Equal(t, len(en.api.Routes()), checked, "every declared route is registered")
	// Unknown paths under the prefix are 401 before they are 404.
	code, _ := doAuth(en, http.MethodGet, admin.Prefix+"/nope", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = doAuth(en, http.MethodGet, admin.Prefix+"/nope", "Bearer "+viewerToken)
	require.Equal(t, http.StatusNotFound, code)
}

func doAuth(en *env, method, target, authorization string) (int, []byte) {
	en.t.Helper()
	code, raw := en.doHeader(method, target, authorization)
	return code, raw
}

func TestReadScopeOnWriteRoutes(t *testing.T) {
	en := newEnv(t, envOpts{})
	for _, r := range en.api.Routes() {
		want := admin.ScopeRead
		if r.Method != http.MethodGet && r.Path != admin.Prefix+"/explain" {
			want = admin.ScopeWrite
		}
		require.Equal(t, want, r.Scope, "%s %s", r.Method, r.Path)
	}
}
