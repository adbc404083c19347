package store_test

import (
	"github.com/signalgate/signalgate/admin"
	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/approval"
	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/connectors/email"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/console"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/metrics"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/retention"
	"github.com/signalgate/signalgate/schedule"
	"github.com/signalgate/signalgate/silence"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/watch"
)

// Each port implements the interfaces its consumers declare (the wiring in package gateway
// hands them so); a port that drifts from its consumer fails to compile here.
var (
	_ inbox.Store       = (*store.Inbox)(nil)
	_ inbox.SnoozeStore = (*store.Inbox)(nil)
	_ inbox.HoldStore   = (*store.Inbox)(nil)

	_ delivery.Queue       = (*store.Queue)(nil)
	_ delivery.Recoveries  = (*store.Queue)(nil)
	_ delivery.Health      = (*store.Targets)(nil)
	_ metrics.TargetReader = (*store.Targets)(nil)

	_ agent.RunStore    = (*store.Runs)(nil)
	_ agent.WakeStore   = (*store.Runs)(nil)
	_ agent.FrameReader = (*store.Frames)(nil)
	_ agent.RecordStore = (*store.Records)(nil)
	_ agent.StateStore  = (*store.States)(nil)

	_ reply.Store = (*store.Replies)(nil)
	_ reply.Own   = (*store.Replies)(nil)

	_ watch.Store            = (*store.Watches)(nil)
	_ watch.Due              = (*store.Watches)(nil)
	_ connectors.WatchLookup = (*store.Watches)(nil)
	_ admin.WatchReader      = (*store.Watches)(nil)
	_ github.SeenRepos       = (*store.SeenRepos)(nil)

	_ approval.Store  = (*store.Approvals)(nil)
	_ approval.Places = (*store.Approvals)(nil)
	_ schedule.Store  = (*store.Schedules)(nil)
	_ silence.Store   = (*store.Silences)(nil)

	_ admin.ExplainStore = (*store.Explain)(nil)
	_ admin.Store        = (*store.Admin)(nil)
	_ console.Sessions   = (*store.ConsoleSessions)(nil)

	_ email.CursorStore   = (*store.ConnectorState)(nil)
	_ github.StateStore   = (*store.ConnectorState)(nil)
	_ retention.Store     = (*store.Retention)(nil)
	_ metrics.StatsReader = (*store.Gauges)(nil)
)
