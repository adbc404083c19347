package linear

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/reply"
)

// Replier posts answers through Linear's GraphQL API: a comment replying in the thread
// of the comment that asked (commentCreate with parentId), or an agent activity on the
// agent session that asked (agentActivityCreate). It implements reply.Sender.
//
// Linear takes the id of what is created (a UUID): each answer is created under an id
// derived from its connector and reply id, its marker. Find looks that id up, so an
// answer whose post was taken but not recorded is found, never posted twice; and only
// a comment or activity written as the connector's own user counts.
type Replier struct {
	conns map[string]*client
}

var _ reply.Sender = (*Replier)(nil)

// NewReplier builds a client per connector with credentials.
func NewReplier(cfgs []Config, now func() time.Time) (*Replier, error) {
	if now == nil {
		now = time.Now
	}
	r := &Replier{conns: make(map[string]*client, len(cfgs))}
	for _, c := range cfgs {
		r.conns[c.Name] = newClient(c.WithDefaults(), now)
	}
	return r, nil
}

// Check refuses what can never be posted: an unknown connector or place, an activity
// type Linear does not have, a connector without credentials.
func (r *Replier) Check(to reply.To, _ string) error {
	_, _, err := r.place(to)
	return err
}

func (r *Replier) place(to reply.To) (*client, Place, error) {
	if to.Source != Source {
		return nil, Place{}, fmt.Errorf("%w: source %q is not linear", reply.ErrUnknownPlace, to.Source)
	}
	c, ok := r.conns[to.Connector]
	if !ok {
		return nil, Place{}, fmt.Errorf("%w: no linear connector named %q", reply.ErrUnknownPlace, to.Connector)
	}
	p, err := reply.PlaceOf[Place](to)
	if err != nil {
		return nil, p, fmt.Errorf("%w: %w", reply.ErrUnknownPlace, err)
	}
	if err := p.check(); err != nil {
		return nil, p, fmt.Errorf("%w: replyTo.%w", reply.ErrUnknownPlace, err)
	}
	if c == nil {
		return nil, p, fmt.Errorf("%w: connectors.linear[] %q needs access_token or api_key", reply.ErrNoCredentials, to.Connector)
	}
	if p.AgentSessionID != "" && !c.oauth {
		return nil, p, fmt.Errorf("%w: connectors.linear[] %q: an agent activity is posted as an OAuth application's agent; set access_token (installed with actor=app), not api_key",
			reply.ErrNoCredentials, to.Connector)
	}
	return c, p, nil
}

// markerSpace is the namespace answers' ids are derived in.
var markerSpace = uuid.MustParse("8f0e3b52-3a51-4d5e-9a52-6c1b8f1f0a7e")

// answerID is the id Linear creates an answer under: a UUID (version 4 in form, as
// Linear asks) derived from the connector and the reply's id.
func answerID(connector, replyID string) string {
	return uuid.NewHash(sha256.New(), markerSpace, []byte(connector+"\x00"+replyID), 4).String()
}

const commentCreate = `mutation SignalgateCommentCreate($input: CommentCreateInput!) {
  commentCreate(input: $input) {
    success
    comment {
      id
      url
    }
  }
}`

const activityCreate = `mutation SignalgateAgentActivityCreate($input: AgentActivityCreateInput!) {
  agentActivityCreate(input: $input) {
    success
    agentActivity {
      id
    }
  }
}`

// Send posts rp under its derived id: an agent activity when its place names an agent
// session (a response unless the agent asked for another type), else a comment in the
// thread its place names.
func (r *Replier) Send(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, p, err := r.place(rp.To)
	if err != nil {
		return reply.Sent{}, false, err
	}
	id := answerID(rp.To.Connector, rp.ID)
	if p.AgentSessionID != "" {
		content := map[string]any{"type": ActivityResponse, "body": rp.Text}
		switch p.Activity {
		case ActivityAction:
			content = map[string]any{"type": ActivityAction, "action": p.Action, "parameter": rp.Text}
		case "":
		default:
			content["type"] = p.Activity
		}
		input := map[string]any{"id": id, "agentSessionId": p.AgentSessionID, "content": content}
		var out struct {
			AgentActivityCreate struct {
				Success       bool `json:"success"`
				AgentActivity struct {
					ID string `json:"id"`
				} `json:"agentActivity"`
			} `json:"agentActivityCreate"`
		}
		if err := c.do(ctx, "create the agent activity", "SignalgateAgentActivityCreate", activityCreate, map[string]any{"input": input}, &out); err != nil {
			return reply.Sent{}, retryable(err), sendError(err)
		}
		if !out.AgentActivityCreate.Success {
			return reply.Sent{}, true, errors.New("create the agent activity: linear answered success false")
		}
		return reply.Sent{PlatformID: out.AgentActivityCreate.AgentActivity.ID}, false, nil
	}
	input := map[string]any{"id": id, "issueId": p.IssueID, "body": rp.Text}
	if p.ParentCommentID != "" {
		input["parentId"] = p.ParentCommentID
	}
	var out struct {
		CommentCreate struct {
			Success bool `json:"success"`
			Comment struct {
				ID  string `json:"id"`
				URL string `json:"url"`
			} `json:"comment"`
		} `json:"commentCreate"`
	}
	if err := c.do(ctx, "create the comment", "SignalgateCommentCreate", commentCreate, map[string]any{"input": input}, &out); err != nil {
		return reply.Sent{}, retryable(err), sendError(err)
	}
	if !out.CommentCreate.Success {
		return reply.Sent{}, true, errors.New("create the comment: linear answered success false")
	}
	return reply.Sent{PlatformID: out.CommentCreate.Comment.ID, URL: out.CommentCreate.Comment.URL}, false, nil
}

func retryable(err error) bool {
	var ae *apiError
	return !errors.As(err, &ae) || ae.retry
}

// sendError carries Linear's wait as a reply.RetryAfter when it named one.
func sendError(err error) error {
	var ae *apiError
	if errors.As(err, &ae) && ae.wait > 0 {
		return &reply.RetryAfter{Wait: ae.wait, Err: err}
	}
	return err
}

const findComment = `query SignalgateFindComment($id: ID!) {
  comments(filter: { id: { eq: $id } }, first: 1) {
    nodes {
      id
      url
      user {
        id
      }
    }
  }
}`

const findActivity = `query SignalgateFindAgentActivity($id: ID!) {
  agentActivities(filter: { id: { eq: $id } }, first: 1) {
    nodes {
      id
      user {
        id
      }
    }
  }
}`

// Find looks rp up by its derived id: the comment or agent activity it was created as,
// written as the connector's own user.
func (r *Replier) Find(ctx context.Context, rp reply.Reply) (reply.Sent, bool, error) {
	c, p, err := r.place(rp.To)
	if err != nil {
		return reply.Sent{}, false, err
	}
	me, err := c.whoAmI(ctx)
	if err != nil {
		return reply.Sent{}, false, err
	}
	id := answerID(rp.To.Connector, rp.ID)
	type node struct {
		ID   string `json:"id"`
		URL  string `json:"url"`
		User *struct {
			ID string `json:"id"`
		} `json:"user"`
	}
	var nodes []node
	if p.AgentSessionID != "" {
		var out struct {
			AgentActivities struct {
				Nodes []node `json:"nodes"`
			} `json:"agentActivities"`
		}
		if err := c.do(ctx, "look for the agent activity", "SignalgateFindAgentActivity", findActivity, map[string]any{"id": id}, &out); err != nil {
			return reply.Sent{}, false, err
		}
		nodes = out.AgentActivities.Nodes
	} else {
		var out struct {
			Comments struct {
				Nodes []node `json:"nodes"`
			} `json:"comments"`
		}
		if err := c.do(ctx, "look for the comment", "SignalgateFindComment", findComment, map[string]any{"id": id}, &out); err != nil {
			return reply.Sent{}, false, err
		}
		nodes = out.Comments.Nodes
	}
	for _, n := range nodes {
		if n.ID == id && n.User != nil && n.User.ID == me.ID {
			return reply.Sent{PlatformID: n.ID, URL: n.URL}, true, nil
		}
	}
	return reply.Sent{}, false, nil
}
