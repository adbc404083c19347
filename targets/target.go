// Package targets builds the dispatcher's routes for every configured agent: stream,
// mastra (with its presence follower) and webhook.
package targets

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/delivery"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/targets/mastra"
	"github.com/signalgate/signalgate/targets/webhook"
)

// Service is a background part a target needs (a Mastra presence follower).
type Service interface {
	Name() string
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Routes builds one route per agent: stream agents share stream; mastra and webhook
// agents get their own target, bounded by target.concurrency. notify receives threads
// that turned idle (the dispatcher's wake-up, delivery.Kick, built before both). The services must be started before the dispatcher and stopped
// after it. follow configures every Mastra presence follower (approvals). tp traces the
// mastra and webhook targets' requests (nil: off).
func Routes(cfgs []agent.Config, runs *agent.Runs, stream delivery.Target, notify func([]inbox.ThreadKey), log *slog.Logger, tp trace.TracerProvider, follow ...mastra.FollowerOption) (map[string]delivery.Route, []Service, error) {
	if log == nil {
		log = slog.Default()
	}
	routes := map[string]delivery.Route{}
	var services []Service
	for _, c := range cfgs {
		c = c.WithDefaults()
		r := delivery.RouteOf(c, nil)
		switch c.Target.Kind {
		case agent.TargetStream:
			r.Target = stream
		case agent.TargetMastra:
			f := mastra.NewFollower(c, runs, notify, service.Base{Logger: log}, follow...)
			t, err := mastra.New(c, mastra.WithFollower(f), mastra.WithTracerProvider(tp))
			if err != nil {
				return nil, nil, err
			}
			r.Target, r.Concurrency = t, c.Target.Concurrency
			services = append(services, f)
		case agent.TargetWebhook:
			t, err := webhook.New(c, webhook.WithTracerProvider(tp))
			if err != nil {
				return nil, nil, err
			}
			r.Target, r.Concurrency = t, c.Target.Concurrency
		default:
			return nil, nil, fmt.Errorf("agent %q: unknown target kind %q", c.ID, c.Target.Kind)
		}
		routes[c.ID] = r
	}
	return routes, services, nil
}
