package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/schedule"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
)

// fakeSender records the signals fires send; fail makes the target refuse them.
type fakeSender struct {
	mu   sync.Mutex
	sent []agent.SignalRequest
	fail bool
}

func (f *fakeSender) SendSignal(_ context.Context, _ inbox.ThreadKey, req agent.SignalRequest) (agent.SignalResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return agent.SignalResult{}, agent.ErrDeliveryFailed
	}
	f.sent = append(f.sent, req)
	return agent.SignalResult{Accepted: true, ID: req.Signal.ID, Action: agent.BehaviorWake, RunID: "run-1"}, nil
}

// withSchedules serves schedules over the env's store, with one config.yaml schedule.
func (en *env) withSchedules(t *testing.T) (*schedule.Service, *fakeSender) {
	send := &fakeSender{}
	svc := schedule.NewService(store.NewSchedules(en.st), send, []string{"coder", "support"}, service.Base{Now: en.clock.Now})
	require.NoError(t, svc.SyncConfig(t.Context(), []schedule.Spec{{ID: "from-config", Agent: "coder", ResourceID: "ops",
		ThreadID: "daily", Cron: "0 9 * * *", Contents: "daily"}}))
	d := en.deps
	d.Schedules = svc
	en.api = en.newAPI(d)
	return svc, send
}

func TestSchedulesAPI(t *testing.T) {
	forBackends(t, envOpts{}, func(t *testing.T, en *env) {
		_, send := en.withSchedules(t)
		body := map[string]any{"id": "standup", "agent": "coder", "resourceId": "ops", "threadId": "standup",
			"cron": "30 9 * * 1-5", "timezone": "Europe/Berlin", "contents": "standup time", "signalType": "user",
			"attributes": map[string]any{"team": "core"}, "ifActive": map[string]any{"behavior": "persist"},
			"ifIdle": map[string]any{"behavior": "wake", "streamOptions": map[string]any{"maxSteps": 3}}, "catchUp": "last"}

		code, raw := en.do(http.MethodPost, "/admin/v1/schedules", viewerToken, body)
		require.Equal(t, http.StatusForbidden, code, "read scope cannot create: %s", raw)
		code, raw = en.do(http.MethodPost, "/admin/v1/schedules", opsToken, body)
		require.Equal(t, http.StatusCreated, code, string(raw))
		var sc schedule.Schedule
		require.NoError(t, json.Unmarshal(raw, &sc))
		require.Equal(t, "api", sc.Origin)
		require.Equal(t, schedule.StatusActive, sc.Status)
		require.Equal(t, "schedule", sc.TagName, "tagName's default")
		require.Equal(t, "2026-11-03T08:30:00Z", sc.NextFireAt.Format("2006-01-02T15:04:05Z07:00"), "09:30 in Berlin (CET): today's has passed")
		var shape map[string]any
		require.NoError(t, json.Unmarshal(raw, &shape))
		for _, k := range []string{"resourceId", "threadId", "signalType", "tagName", "ifActive", "ifIdle", "catchUp", "nextFireAt"} {
			require.Contains(t, shape, k, "Mastra's camelCase")
		}
		require.Equal(t, map[string]any{"behavior": "wake", "streamOptions": map[string]any{"maxSteps": float64(3)}}, shape["ifIdle"])

		code, raw = en.do(http.MethodPost, "/admin/v1/schedules", opsToken, body)
		require.Equal(t, http.StatusConflict, code, string(raw))

		var list struct{ Schedules []schedule.Schedule }
		code, raw = en.do(http.MethodGet, "/admin/v1/schedules", viewerToken, nil)
		require.Equal(t, http.StatusOK, code, "read scope lists")
		require.NoError(t, json.Unmarshal(raw, &list))
		require.Len(t, list.Schedules, 2)
		require.Equal(t, "config", list.Schedules[0].Origin)

		// PATCH is a merge patch: a new cron starts again from now.
		sc = schedule.Schedule{}
		en.call(http.MethodPatch, "/admin/v1/schedules/standup", map[string]any{"cron": "0 10 * * *", "attributes": nil}, &sc)
		require.Equal(t, "0 10 * * *", sc.Cron)
		require.Empty(t, sc.Attributes)
		require.Equal(t, "standup time", sc.Contents)
		require.Equal(t, "2026-11-03T09:00:00Z", sc.NextFireAt.Format("2006-01-02T15:04:05Z07:00"), "10:00 in Berlin, from now")

		en.call(http.MethodPost, "/admin/v1/schedules/standup/pause", nil, &sc)
		require.Equal(t, schedule.StatusPaused, sc.Status)
		en.call(http.MethodPost, "/admin/v1/schedules/standup/resume", nil, &sc)
		require.Equal(t, schedule.StatusActive, sc.Status)

		var res agent.SignalResult
		en.call(http.MethodPost, "/admin/v1/schedules/standup/run", nil, &res)
		require.Equal(t, "schedule:standup:2026-11-02T09:00:00Z", res.ID)
		require.Len(t, send.sent, 1)
		req := send.sent[0]
		require.Equal(t, "user", req.Signal.Type)
		require.Equal(t, agent.BehaviorPersist, req.IfActive.Behavior)
		require.Equal(t, map[string]any{"maxSteps": float64(3)}, req.IfIdle.StreamOptions)
		require.Equal(t, "ops", req.ResourceID)

		send.fail = true
		code, raw = en.do(http.MethodPost, "/admin/v1/schedules/standup/run", opsToken, nil)
		require.Equal(t, http.StatusBadGateway, code, string(raw))

		en.call(http.MethodDelete, "/admin/v1/schedules/standup", nil, nil)
		code, _ = en.do(http.MethodGet, "/admin/v1/schedules/standup", opsToken, nil)
		require.Equal(t, http.StatusNotFound, code)
	})
}

// Bad input is a 400 naming the field; a config schedule is changed in config.yaml.
func TestSchedulesAPIRefusals(t *testing.T) {
	en := newEnv(t, envOpts{})
	svc, _ := en.withSchedules(t)
	for body, field := range map[string]string{
		`{"id":"x","agent":"coder","resourceId":"r","threadId":"t","cron":"* * *","contents":"c"}`:                                     "cron: ",
		`{"id":"x","agent":"coder","resourceId":"r","threadId":"t","cron":"0 9 * * *","timezone":"Moon/Base","contents":"c"}`:          "timezone: ",
		`{"id":"x","agent":"ghost","resourceId":"r","threadId":"t","cron":"0 9 * * *","contents":"c"}`:                                 "agent: ",
		`{"id":"x","agent":"coder","threadId":"t","cron":"0 9 * * *","contents":"c"}`:                                                  "resourceId: ",
		`{"id":"x","agent":"coder","resourceId":"r","threadId":"t","cron":"0 9 * * *","contents":"c","ifIdle":{"behavior":"deliver"}}`: "ifIdle.behavior: ",
		`{"id":"x","agent":"coder","resourceId":"r","threadId":"t","cron":"0 9 * * *","contents":"c","catchUp":"all"}`:                 "catchUp: ",
		`{"id":"x","agent":"coder","resourceId":"r","threadId":"t","cron":"0 9 * * *","contents":"c","prompt":"p"}`:                    "prompt",
		`[1,2]`: "",
	} {
		code, raw := en.do(http.MethodPost, "/admin/v1/schedules", opsToken, body)
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", body, raw)
		_, msg := errorOf(t, raw)
		require.Contains(t, msg, field, body)
	}
	code, raw := en.do(http.MethodPatch, "/admin/v1/schedules/from-config", opsToken, map[string]any{"cron": "0 8 * * *"})
	require.Equal(t, http.StatusConflict, code, string(raw))
	_, msg := errorOf(t, raw)
	require.Contains(t, msg, "config.yaml")
	code, _ = en.do(http.MethodGet, "/admin/v1/schedules/bad%20id", opsToken, nil)
	require.Equal(t, http.StatusBadRequest, code)
	code, _ = en.do(http.MethodPost, "/admin/v1/schedules/none/run", opsToken, nil)
	require.Equal(t, http.StatusNotFound, code)

	// A config schedule deleted through the API stops now and is back at the next start;
	// a pause outlasts the start.
	en.call(http.MethodDelete, "/admin/v1/schedules/from-config", nil, nil)
	code, _ = en.do(http.MethodGet, "/admin/v1/schedules/from-config", opsToken, nil)
	require.Equal(t, http.StatusNotFound, code)
	config := []schedule.Spec{{ID: "from-config", Agent: "coder", ResourceID: "ops", ThreadID: "daily", Cron: "0 9 * * *", Contents: "daily"}}
	require.NoError(t, svc.SyncConfig(t.Context(), config))
	var sc schedule.Schedule
	en.call(http.MethodPost, "/admin/v1/schedules/from-config/pause", nil, &sc)
	require.NoError(t, svc.SyncConfig(t.Context(), config))
	en.call(http.MethodGet, "/admin/v1/schedules/from-config", nil, &sc)
	require.Equal(t, schedule.StatusPaused, sc.Status)
	require.Equal(t, "config", sc.Origin)
	require.NoError(t, svc.SyncConfig(t.Context(), nil), "removed from the file")
	code, _ = en.do(http.MethodGet, "/admin/v1/schedules/from-config", opsToken, nil)
	require.Equal(t, http.StatusNotFound, code)
}
