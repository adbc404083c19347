package slack

import (
	"regexp"
	"strings"
)

// markupToken matches Slack's angle-bracket markup: <@U1>, <#C1|general>,
// <!here>, <https://x|label>. Literal <, > and & arrive escaped, so a bare
// bracket pair is always markup.
var markupToken = regexp.MustCompile(`<([^<>]*)>`)

// entities undoes the only escaping Slack applies to message text.
var entities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// namer resolves ids to names; it returns "" when a name is unknown.
type namer struct {
	user    func(id string) string
	channel func(id string) string
}

// renderText turns Slack mrkdwn markup into plain text: mentions become @name,
// channel links #name, links "label (url)". Unresolved ids stay as ids.
func renderText(s string, n namer) string {
	var b strings.Builder
	last := 0
	for _, m := range markupToken.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(entities.Replace(s[last:m[0]]))
		b.WriteString(renderToken(s[m[2]:m[3]], n))
		last = m[1]
	}
	b.WriteString(entities.Replace(s[last:]))
	return b.String()
}

func renderToken(tok string, n namer) string {
	target, label, hasLabel := strings.Cut(tok, "|")
	label = entities.Replace(label)
	switch {
	case strings.HasPrefix(target, "@"):
		if hasLabel && label != "" {
			return "@" + strings.TrimPrefix(label, "@")
		}
		id := target[1:]
		if n.user != nil {
			if name := n.user(id); name != "" {
				return "@" + name
			}
		}
		return "@" + id
	case strings.HasPrefix(target, "#"):
		if hasLabel && label != "" {
			return "#" + strings.TrimPrefix(label, "#")
		}
		id := target[1:]
		if n.channel != nil {
			if name := n.channel(id); name != "" {
				return "#" + name
			}
		}
		return "#" + id
	case strings.HasPrefix(target, "!"):
		// Special mentions (<!here>), user groups (<!subteam^S1|@team>) and
		// dates (<!date^…|fallback>) all carry their readable form as the label.
		if hasLabel && label != "" {
			return label
		}
		cmd, _, _ := strings.Cut(target[1:], "^")
		return "@" + cmd
	default:
		url := entities.Replace(target)
		plain := strings.TrimPrefix(url, "mailto:")
		if !hasLabel || label == "" || label == url || label == plain {
			return plain
		}
		return label + " (" + url + ")"
	}
}

// markupIDs lists the user and channel ids referenced without a label, in order
// of appearance, at most max of them together: the ones worth resolving.
func markupIDs(s string, max int) (users, channels []string) {
	seen := map[string]bool{}
	for _, m := range markupToken.FindAllStringSubmatch(s, -1) {
		if len(users)+len(channels) >= max {
			break
		}
		target, label, _ := strings.Cut(m[1], "|")
		if label != "" || len(target) < 2 || seen[target] {
			continue
		}
		seen[target] = true
		switch target[0] {
		case '@':
			users = append(users, target[1:])
		case '#':
			channels = append(channels, target[1:])
		}
	}
	return users, channels
}

// mentions reports whether text mentions the user id as <@ID> or <@ID|name>.
func mentions(text, userID string) bool {
	if userID == "" {
		return false
	}
	for _, m := range markupToken.FindAllStringSubmatch(text, -1) {
		target, _, _ := strings.Cut(m[1], "|")
		if strings.EqualFold(target, "@"+userID) {
			return true
		}
	}
	return false
}

// oneLine collapses all whitespace runs to single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
