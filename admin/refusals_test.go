package admin_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/connectors"
)

// fakeRefusals keeps one log per "source/name".
type fakeRefusals map[string]connectors.RefusalLog

func (f fakeRefusals) Log(source, name string) (connectors.RefusalLog, bool) {
	l, ok := f[source+"/"+name]
	return l, ok
}

// TestConnectorRefusals: a connector's refusals are listed with its health and on
// their own path; a connector that is not configured, or takes no HTTP deliveries, is a 404.
func TestConnectorRefusals(t *testing.T) {
	en := newEnv(t, envOpts{})
	log := connectors.RefusalLog{Total: 3, Since: t0, Recent: []connectors.Refusal{
		{At: t0.Add(2 * time.Second), RemoteAddr: "203.0.113.7", Status: http.StatusUnauthorized, Reason: string(connectors.ReasonNoV1Signature)},
		{At: t0.Add(time.Second), RemoteAddr: "203.0.113.7", Status: http.StatusUnauthorized, Reason: string(connectors.ReasonTimestampWindow)},
	}}
	d := en.deps
	d.Refusals = fakeRefusals{"generic/billing": log}
	en.newAPI(d)

	var list struct {
		Connectors []admin.ConnectorHealth `json:"connectors"`
	}
	en.call(http.MethodGet, "/admin/v1/connectors", nil, &list)
	require.Len(t, list.Connectors, 2)
	require.NotNil(t, list.Connectors[0].Refusals)
	assert.Equal(t, log, *list.Connectors[0].Refusals)
	assert.Nil(t, list.Connectors[1].Refusals, "an email connector refuses nothing over HTTP")

	var one map[string]any
	en.call(http.MethodGet, "/admin/v1/connectors/generic/billing/refusals", nil, &one)
	raw, err := json.Marshal(one)
	require.NoError(t, err)
	assert.JSONEq(t, `{"source":"generic","name":"billing","total":3,"since":"2026-11-02T09:00:00Z","recent":[
		{"at":"2026-11-02T09:00:02Z","remoteAddr":"203.0.113.7","status":401,"reason":"no matching v1 signature"},
		{"at":"2026-11-02T09:00:01Z","remoteAddr":"203.0.113.7","status":401,"reason":"timestamp outside the tolerance window"}]}`, string(raw))

	for target, want := range map[string]string{
		"/admin/v1/connectors/generic/nope/refusals":   `no generic connector named "nope"`,
		"/admin/v1/connectors/email/support/refusals":  `email connector "support" takes no HTTP deliveries`,
		"/admin/v1/connectors/github/billing/refusals": `no github connector named "billing"`,
	} {
		code, body := en.do(http.MethodGet, target, opsToken, nil)
		require.Equal(t, http.StatusNotFound, code, target)
		_, msg := errorOf(t, body)
		assert.Contains(t, msg, want)
	}
	code, _ := en.do(http.MethodGet, "/admin/v1/connectors/generic/billing/refusals", "", nil)
	assert.Equal(t, http.StatusUnauthorized, code)
}
