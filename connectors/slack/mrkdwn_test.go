package slack

import (
	"strings"
	"testing"
)

func TestMrkdwnConvertsMarkdown(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "Hello there", "Hello there"},
		{"bold and italic", "**done** and *soon* and __also__ _x_", "*done* and _soon_ and *also* _x_"},
		{"strike", "~~old~~ new", "~old~ new"},
		{"heading", "# Result\n\nAll green.", "*Result*\n\nAll green."},
		{"code span", "run `a < b && c`", "run `a &lt; b &amp;&amp; c`"},
		{"fenced code", "```go\nif a < b {\n}\n```", "```\nif a &lt; b {\n}\n```"},
		{"link", "see [the PR](https://github.com/o/r/pull/1?a=1&b=2)", "see <https://github.com/o/r/pull/1?a=1&amp;b=2|the PR>"},
		{"autolink", "<https://example.com/x>", "<https://example.com/x>"},
		{"link label same as url", "[https://example.com](https://example.com)", "<https://example.com>"},
		{"email autolink", "<ops@example.com>", "<mailto:ops@example.com>"},
		{"bullets", "- one\n- two\n  - nested", "• one\n• two\n    • nested"},
		{"ordered", "3. c\n4. d", "3. c\n4. d"},
		{"quote", "> quoted\n> more\n\nafter", "> quoted\n> more\n\nafter"},
		{"line breaks kept", "line one\nline two", "line one\nline two"},
		{"backslash escape", `\*not emphasis\*`, "*not emphasis*"},
		{"entity", "1 &lt; 2", "1 &lt; 2"},
		{"ampersand", "AT&T", "AT&amp;T"},
		{"thematic break", "a\n\n---\n\nb", "a\n\n───\n\nb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := markdownToMrkdwn(tc.in, false); got != tc.want {
				t.Errorf("mrkdwn(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// An agent's text must not ping a channel, a group or a person unless the connector
// allows mentions: every <, > and & it writes reaches Slack escaped.
func TestMrkdwnEscapesMarkupUnlessMentionsAllowed(t *testing.T) {
	for _, in := range []string{
		"<!channel> deploy is done",
		"hey <!here|here>",
		"ping <@U0123ABCD> and <!subteam^S123|@oncall>",
		"<#C0123|general>",
		"<!everyone>",
		"&lt;!channel&gt;",
		"&#60;!channel&#62;",
		"[click](<!channel>)",
		"[<!channel>](https://example.com)",
		"[x](https://example.com/a>b|<!channel>)",
		"<div><!channel></div>\n\n<!channel>",
		"`<!channel>`",
		"*<!channel>*",
		"- <!channel>\n> <!here>",
		"<https://example.com|<!channel>>",
		"[x](javascript:alert(1))",
	} {
		got := markdownToMrkdwn(in, false)
		for _, bad := range []string{"<!", "<@", "<#"} {
			if strings.Contains(got, bad) {
				t.Errorf("mrkdwn(%q) = %q: contains markup %q", in, got, bad)
			}
		}
	}
	if got := markdownToMrkdwn("[x](javascript:alert(1))", false); strings.Contains(got, "<") {
		t.Errorf("a javascript: link became a link: %q", got)
	}
	if got, want := markdownToMrkdwn("<!here> ping <@U0123ABCD>, AT&T", true), "<!here> ping <@U0123ABCD>, AT&amp;T"; got != want {
		t.Errorf("allow_mentions: got %q, want %q", got, want)
	}
	if got, want := markdownToMrkdwn("`<!here>`", true), "`&lt;!here&gt;`"; got != want {
		t.Errorf("allow_mentions, code: got %q, want %q", got, want)
	}
}
