package github

import (
	"encoding/json"
	"errors"
	"fmt"

	gh "github.com/google/go-github/v62/github"

	"github.com/signalgate/signalgate/inbox"
)

// decoded is one delivery's payload read once: the mapping, the own-reply check and
// the repository record all take what they need from it instead of each decoding the
// body again (three passes over a 10 KB body were ~10 % of the ingest CPU).
type decoded struct {
	payload []byte
	event   any // go-github's typed event; nil when the type is not mapped or unreadable
	// status and reason say why nothing is mapped: invalid or ignored ("" when mapped).
	status  inbox.EventStatus
	reason  string
	dropped []string // fields a lenient read left out
	repo    string   // repository.full_name, "" when there is none
	comment *commentFacts
}

// malformedJSON is the reason a payload that is not JSON is stored invalid with.
const malformedJSON = "malformed JSON payload"

// commentFacts is what ownReply reads of a comment event.
type commentFacts struct {
	ID    int64
	Body  string
	Login string
}

// decodePayload reads one delivery's JSON payload. A type the connector does not map
// is only checked and its repository read: nothing else of it is needed.
func decodePayload(eventType string, payload []byte) *decoded {
	d := &decoded{payload: payload}
	if !mappedEvent(eventType) {
		var p struct {
			Repository struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
		}
		// Unmarshal checks the syntax first: one pass instead of json.Valid and a decode.
		if err := json.Unmarshal(payload, &p); err != nil {
			if _, bad := errors.AsType[*json.SyntaxError](err); bad {
				d.status, d.reason = inbox.EventInvalid, malformedJSON
				return d
			}
		}
		switch {
		case !jsonObject(payload):
			d.status, d.reason = inbox.EventInvalid, fmt.Sprintf("decode %s payload: want a JSON object", eventType)
		case eventType != "ping":
			d.status, d.reason = inbox.EventIgnored, fmt.Sprintf("event type %q is not mapped", eventType)
		}
		d.repo = p.Repository.FullName
		return d
	}
	// Decoding checks the syntax first: one pass over the body, not a separate json.Valid.
	parsed, err := gh.ParseWebHook(eventType, payload)
	if _, bad := errors.AsType[*json.SyntaxError](err); bad {
		d.status, d.reason = inbox.EventInvalid, malformedJSON
		return d
	}
	if err == nil && !jsonObject(payload) {
		// null decodes into every event's type: an empty event, not a delivery.
		d.status, d.reason = inbox.EventInvalid, fmt.Sprintf("decode %s payload: want a JSON object", eventType)
		return d
	}
	if err != nil {
		// A field go-github's types refuse must not make the whole event unreadable:
		// the mapping reads a few fields, the rest is tolerated.
		if parsed, d.dropped, err = parseLenient(eventType, payload); err != nil {
			d.status, d.reason = inbox.EventInvalid, fmt.Sprintf("decode %s payload: %s", eventType, jsonProblem(err))
			return d
		}
	}
	d.event = parsed
	if r, ok := parsed.(interface{ GetRepo() *gh.Repository }); ok {
		d.repo = r.GetRepo().GetFullName()
	}
	switch e := parsed.(type) {
	case *gh.IssueCommentEvent:
		c := e.GetComment()
		d.comment = &commentFacts{ID: c.GetID(), Body: c.GetBody(), Login: c.GetUser().GetLogin()}
	case *gh.PullRequestReviewCommentEvent:
		c := e.GetComment()
		d.comment = &commentFacts{ID: c.GetID(), Body: c.GetBody(), Login: c.GetUser().GetLogin()}
	}
	return d
}

// commentApp is the App a comment was posted through (comment.performed_via_github_app),
// which go-github's comment types leave out: read from the payload only for a marked
// comment, the rare case where it decides.
func (d *decoded) commentApp() (id int64, slug string) {
	var p struct {
		Comment struct {
			App *struct {
				ID   int64  `json:"id"`
				Slug string `json:"slug"`
			} `json:"performed_via_github_app"`
		} `json:"comment"`
	}
	if json.Unmarshal(d.payload, &p) != nil || p.Comment.App == nil {
		return 0, ""
	}
	return p.Comment.App.ID, p.Comment.App.Slug
}

// marked reports whether the comment ends with a reply's hidden marker, where the
// gateway puts it, and names its author.
func (c *commentFacts) marked() bool {
	_, ok := markedID(c.Body)
	return c.Login != "" && ok
}
