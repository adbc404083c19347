package slack

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Place is where a Slack answer goes: the fields of a Slack replyTo besides source and
// connector.
type Place struct {
	Team    string `json:"team,omitempty" doc:"Slack team."`
	Channel string `json:"channel,omitempty" doc:"Slack channel or DM."`
	// ThreadTS is the thread answered in; empty: the top level of the conversation.
	ThreadTS string `json:"threadTs,omitempty" doc:"Slack thread (empty: top level)."`
}

// PlaceCodec reads Slack places (the kinds table's row carries it).
var PlaceCodec reply.PlaceCodec = reply.Codec[Place]{}

// Key is the team, channel and thread.
func (p Place) Key() string { return fmt.Sprintf("%q %q %q", p.Team, p.Channel, p.ThreadTS) }

// Describe is "C1/1700000000.000100", or the channel alone at the top level.
func (p Place) Describe() string {
	if p.ThreadTS == "" {
		return p.Channel
	}
	return p.Channel + "/" + p.ThreadTS
}

// WatchResource is the thread "C123/1712345678.000100", or the channel or DM of a
// top-level message.
func (p Place) WatchResource() (string, bool) {
	if p.Channel == "" {
		return "", false
	}
	return p.Describe(), true
}

var (
	watchChannel = regexp.MustCompile(`^[A-Z0-9]{2,32}$`)
	watchTS      = regexp.MustCompile(`^[0-9]{1,12}\.[0-9]{1,9}$`)
)

// WatchResource reads a Slack watch resource: a channel id ("C0123ABC") or a thread
// ("C0123ABC/1712345678.000100"), the channel upper-cased.
func WatchResource(r string) (watch.Resource, error) {
	ch, ts, hasTS := strings.Cut(r, "/")
	ch = strings.ToUpper(ch)
	if !watchChannel.MatchString(ch) || (hasTS && !watchTS.MatchString(ts)) {
		return watch.Resource{}, errors.New("want a channel id (C0123ABC) or channel/threadTs")
	}
	if !hasTS {
		return watch.Resource{Canonical: ch}, nil
	}
	return watch.Resource{Canonical: ch + "/" + ts}, nil
}
