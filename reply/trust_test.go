package reply_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/agent"
	"github.com/signalgate/signalgate/connectors/github"
	"github.com/signalgate/signalgate/connectors/kindstest"
	"github.com/signalgate/signalgate/connectors/slack"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

// planted stores a notification of thread k naming to with provenance by: what an
// agent's token, a generic sender or another kind's connector could once write.
func (f fixture) planted(t *testing.T, k inbox.ThreadKey, delivery string, to reply.To, by string) {
	t.Helper()
	n := inbox.Notification{Thread: k, Source: to.Source, Kind: "message", Summary: "hi",
		Metadata: map[string]any{reply.MetadataKey: to, agent.MetaVerifiedBy: by}}
	_, err := f.inbox.Ingest(context.Background(), &inbox.Event{Source: to.Source, Connector: to.Connector,
		DeliveryID: delivery, Type: "message", Body: []byte(`{}`)}, []inbox.Notification{n})
	require.NoError(t, err)
}

// A thread's places are those its records name with the provenance of the connector
// kind of the place: a newer record naming #exec-private or another repository, stamped
// by anything else, is neither the default nor a place the agent may ask for.
func TestReplyPlacesNeedTheirOwnConnectorsProvenance(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil)
		f.notify(t, thread, "d0", dm)
		exec := reply.NewTo("slack", "acme", slack.Place{Channel: "C0EXECPRIV"})
		secret := reply.NewTo("github", "gh", github.Place{Repo: "acme/secret", Number: 1})
		for i, p := range []struct {
			to reply.To
			by string
		}{
			{exec, agent.VerifiedByAgentToken}, {exec, "standard-webhooks"}, {exec, "hmac-github"}, {exec, ""},
			{secret, agent.VerifiedByAgentToken}, {secret, "slack-v0"}, {secret, "signalgate"},
		} {
			f.clk.add(1e9)
			f.planted(t, thread, fmt.Sprint("p", i), p.to, p.by)
		}
		for _, to := range []reply.To{exec, secret} {
			_, err := f.svc.Queue(ctx, thread, reply.Request{ID: "to-" + to.Source, Text: "x", ReplyTo: &to})
			require.ErrorIs(t, err, reply.ErrUnknownPlace, to.Source)
		}
		r, err := f.svc.Queue(ctx, thread, reply.Request{ID: "r1", Text: "on it"})
		require.NoError(t, err)
		require.Equal(t, dm, r.To, "the newest place its own connector vouched for")

		f.clk.add(1e9)
		f.notify(t, thread, "d1", issue)
		r, err = f.svc.Queue(ctx, thread, reply.Request{ID: "r2", Text: "on it"})
		require.NoError(t, err)
		require.Equal(t, issue, r.To, "a GitHub place GitHub's signature vouched for")

		bare := reply.New(store.NewReplies(f.st), map[string]reply.Sender{"slack": f.slack}, service.Base{Now: f.clk.now}, reply.WithPlaces(kindstest.Places()))
		_, err = bare.Queue(ctx, thread, reply.Request{ID: "r3", Text: "on it"})
		require.ErrorIs(t, err, reply.ErrUnknownPlace, "without a provenance table no record names a place")
	})
}

// approval: true where nobody can approve is refused, naming approvals.slack_connector:
// the agent asked for a person to look first, and sending it unreviewed is not that.
func TestReplyApprovalAskedWithoutApproversIsRefused(t *testing.T) {
	each(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		f := setup(t, b, nil)
		f.notify(t, thread, "d1", dm)
		_, err := f.svc.Queue(ctx, thread, reply.Request{ID: "a1", Text: "ship it?", Approval: true})
		require.ErrorIs(t, err, reply.ErrNoApprovers)
		require.Contains(t, err.Error(), "approvals.slack_connector")
		code, ok := reply.Code(err)
		require.True(t, ok)
		require.Equal(t, "no_approvers", code)
		_, err = store.NewReplies(f.st).GetReply(ctx, "a1")
		require.ErrorIs(t, err, inbox.ErrNotFound, "nothing queued")
		n, err := f.svc.RunOnce(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		require.Zero(t, f.slack.count("a1"))
	})
}
