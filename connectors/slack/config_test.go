package slack

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

func TestConfigValidate(t *testing.T) {
	assert.NoError(t, testConfig().Validate())
	assert.NoError(t, Config{Name: "sock", SocketMode: true, AppToken: testAppToken}.Validate(), "socket mode needs no signing secret")

	err := connectors.ValidateConfigs("slack", []Config{
		{Name: "a"},
		{Name: "a", SigningSecret: "s"},
		{Name: "b c", SigningSecret: "s", BotUserID: "u0bot", APIURL: "ftp://x"},
		{Name: "d", SocketMode: true},
		{Name: "e", SocketMode: true, AppToken: "xoxb-not-an-app-token"},
		{Name: "f", SigningSecret: "s", Kinds: map[string]string{"mention": "has space", "reaction": "r"},
			Priorities:     map[string]inbox.Priority{"dm": "asap", "other": "low"},
			IgnoreSubtypes: []string{""}, AllowedBots: []string{" "}},
	})
	require.Error(t, err)
	for _, want := range []string{
		"slack[0].signing_secret: required (unsigned Slack requests are never accepted) unless socket_mode is true",
		`slack[1].name: duplicate connector name "a" (also slack[0])`,
		"slack[1].signing_secret: must be at least 16 bytes (Slack issues 32 hex characters; one signed request is enough to guess a shorter one offline)",
		`slack[2].name: "b c" must not contain '/', '?', '#', '%' or spaces (it is a URL path segment)`,
		`slack[2].bot_user_id: "u0bot" is not a Slack user id (like U0123ABCD)`,
		`slack[2].api_url: want an http(s) URL, got "ftp://x"`,
		"slack[3].app_token: required with socket_mode (an app-level token, xapp-…)",
		"slack[4].app_token: want an app-level token starting with xapp-",
		`slack[5].kinds.mention: want a kind name without spaces, got "has space"`,
		"slack[5].kinds.reaction: unknown kind (want mention, dm, group-dm, message)",
		`slack[5].priorities.dm: unknown "asap" (want low, medium, high or urgent)`,
		"slack[5].priorities.other: unknown kind (want mention, dm, group-dm, message)",
		"slack[5].ignore_subtypes[0]: empty subtype",
		"slack[5].allowed_bots[0]: empty bot",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

func TestConfigDefaults(t *testing.T) {
	c := Config{Name: "a", SigningSecret: "s", APIURL: "http://127.0.0.1:9/api"}.WithDefaults()
	assert.Equal(t, DefaultIgnoreSubtypes(), c.IgnoreSubtypes)
	assert.Equal(t, "http://127.0.0.1:9/api/", c.APIURL)
	assert.Equal(t, inbox.PriorityHigh, c.priority(KindMention))
	assert.Equal(t, inbox.PriorityLow, c.priority(KindMessage))
	assert.Equal(t, KindGroupDM, c.kind(KindGroupDM))

	none := Config{Name: "a", SigningSecret: "s", IgnoreSubtypes: []string{}}.WithDefaults()
	assert.Empty(t, none.IgnoreSubtypes, "an explicit empty list ignores nothing")
}
