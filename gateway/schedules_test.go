package gateway

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/schedule"
)

const scheduleToken = "tok-0123456789abc"

// schedules[] loads with the API's fields under snake_case keys.
func TestScheduleConfigLoads(t *testing.T) {
	cfg, err := ParseConfig("test.yaml", []byte(minimal+`
schedules:
  - id: standup
    agent: coder
    resource_id: ops
    thread_id: standup
    cron: "0 30 9 * * 1-5"
    timezone: Europe/Berlin
    contents: Time for the standup.
    signal_type: user
    tag_name: standup
    attributes: {team: core}
    if_active: {behavior: persist}
    if_idle: {behavior: wake, stream_options: {maxSteps: 5}}
    catch_up: last
`), env("CODER_TOKEN", scheduleToken))
	require.NoError(t, err)
	require.Equal(t, []schedule.Spec{{ID: "standup", Agent: "coder", ResourceID: "ops", ThreadID: "standup", Cron: "0 30 9 * * 1-5",
		Timezone: "Europe/Berlin", Contents: "Time for the standup.", SignalType: "user", TagName: "standup",
		Attributes: map[string]any{"team": "core"}, IfActive: schedule.IfActive{Behavior: agent.BehaviorPersist},
		IfIdle:  schedule.IfIdle{Behavior: agent.BehaviorWake, StreamOptions: map[string]any{"maxSteps": 5}},
		CatchUp: schedule.CatchUpLast}}, cfg.Schedules)
}

// Each bad value of schedules[] is refused naming its key as the file spells it.
func TestScheduleConfigNamesKeys(t *testing.T) {
	got := problems(t, minimal+`
schedules:
  - id: a
    agent: ghost
    thread_id: t
    cron: "0 9 * *"
    contents: hi
    signal_type: state
    if_idle: {behavior: deliver}
    if_active: {behavior: wake}
    catch_up: all
  - id: a
    agent: coder
    resource_id: r
    thread_id: t
    cron: "0 9 * * *"
    timezone: Moon/Base
    contents: hi
  - id: b
    agent: coder
    resource_id: r
    thread_id: t
    cron: "0 9 * * *"
    contents: hi
    prompt: hello
`, env("CODER_TOKEN", scheduleToken))
	keys := map[string]bool{}
	for _, p := range got {
		key, _, _ := strings.Cut(p, ": ")
		keys[key] = true
	}
	for _, k := range []string{"schedules[0].agent", "schedules[0].resource_id", "schedules[0].cron", "schedules[0].signal_type",
		"schedules[0].if_idle.behavior", "schedules[0].if_active.behavior", "schedules[0].catch_up", "schedules[1].timezone",
		"schedules[1].id", "schedules[2].prompt"} {
		require.True(t, keys[k], "%s not named in %q", k, got)
	}
}
