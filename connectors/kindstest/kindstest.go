// Package kindstest gives tests of the packages that take the kinds table's places and
// watch resources (reply, watch, connectors, the API fronts) those of the built-in
// connector kinds, as the gateway's table builds them (its tests check they agree).
package kindstest

import (
	"context"
	"slices"

	"github.com/signalgate/signalgate/connectors/alertmanager"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/generic"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/linear"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Sources are the built-in kinds' sources, in the table's order.
func Sources() []string {
	return []string{github.Source, slack.Source, email.Source, generic.Source, alertmanager.Source, linear.Source}
}

// Places are the built-in kinds that answer.
func Places() reply.Places {
	return reply.Places{{Source: github.Source, Codec: github.PlaceCodec}, {Source: slack.Source, Codec: slack.PlaceCodec},
		{Source: email.Source, Codec: email.PlaceCodec}, {Source: alertmanager.Source, Codec: alertmanager.PlaceCodec},
		{Source: linear.Source, Codec: linear.PlaceCodec}}
}

// Resources are the built-in kinds that can be watched.
func Resources() watch.Resources {
	return watch.Resources{{Source: github.Source, Parse: github.WatchResource}, {Source: slack.Source, Parse: slack.WatchResource},
		{Source: email.Source, Parse: email.WatchResource}, {Source: generic.Source, Parse: generic.WatchResource},
		{Source: alertmanager.Source, Parse: alertmanager.WatchResource},
		{Source: linear.Source, Parse: linear.WatchResource}}
}

// Seen is a github.RepoSeer from a table: the repositories each GitHub connector
// receives events for, by connector.
type Seen map[string][]string

// RepoSeen reports whether repo is among connector's.
func (s Seen) RepoSeen(_ context.Context, connector, repo string) (bool, error) {
	return slices.Contains(s[connector], repo), nil
}
