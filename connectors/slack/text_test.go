package slack

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRenderText(t *testing.T) {
	names := namer{
		user:    func(id string) string { return map[string]string{"U1": "alice"}[id] },
		channel: func(id string) string { return map[string]string{"C1": "general"}[id] },
	}
	for in, want := range map[string]string{
		"hi <@U1>":                                    "hi @alice",
		"hi <@U2>":                                    "hi @U2",
		"hi <@U2|bob>":                                "hi @bob",
		"see <#C1>":                                   "see #general",
		"see <#C9|ops>":                               "see #ops",
		"see <#C9>":                                   "see #C9",
		"<!here> <!channel> <!everyone>":              "@here @channel @everyone",
		"<!subteam^S012|@oncall> please":              "@oncall please",
		"<!subteam^S012>":                             "@subteam",
		"<!date^1392734382^{date_short}|Feb 18>":      "Feb 18",
		"<https://example.com>":                       "https://example.com",
		"<https://example.com|https://example.com>":   "https://example.com",
		"<https://x.io/?a=1&amp;b=2|docs &amp; more>": "docs & more (https://x.io/?a=1&b=2)",
		"<mailto:a@b.io|a@b.io>":                      "a@b.io",
		"1 &lt; 2 &amp;&amp; 3 &gt; 2":                "1 < 2 && 3 > 2",
		"&amp;lt; stays literal":                      "&lt; stays literal",
		"":                                            "",
	} {
		assert.Equal(t, want, renderText(in, names), in)
	}
	assert.Equal(t, "hi @U1", renderText("hi <@U1>", namer{}), "no namer: ids")
}

func TestMentions(t *testing.T) {
	assert.True(t, mentions("hey <@U0BOT>", "U0BOT"))
	assert.True(t, mentions("hey <@U0BOT|signalbot>", "U0BOT"))
	assert.False(t, mentions("hey <@U0BOTX>", "U0BOT"))
	assert.False(t, mentions("hey @U0BOT", "U0BOT"), "plain text is not a mention")
	assert.False(t, mentions("hey <@U0BOT>", ""))
}

func TestMarkupIDs(t *testing.T) {
	users, channels := markupIDs("<@U1> <@U1> <#C1> <@U2|bob> <#C2|x> <@U3> <@U4> <@U5> <@U6>", 5)
	assert.Equal(t, []string{"U1", "U3", "U4", "U5"}, users)
	assert.Equal(t, []string{"C1"}, channels)
}
