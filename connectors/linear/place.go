package linear

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Place is where a Linear answer goes: the fields of a linear replyTo besides source
// and connector. Issue, IssueID, ParentCommentID and AgentSessionID are the event's own;
// Activity and Action are the agent's: what kind of agent activity the answer is.
type Place struct {
	// Issue is the issue's identifier (ENG-123).
	Issue string `json:"issue,omitempty" doc:"Linear issue identifier (ENG-123)."`
	// IssueID is the issue's id, which a comment is created on.
	IssueID string `json:"issueId,omitempty" doc:"Linear issue id the answer comments on."`
	// ParentCommentID is the thread's first comment: the answer is a reply in it.
	ParentCommentID string `json:"parentCommentId,omitempty" doc:"Linear comment thread the answer replies in."`
	// AgentSessionID, when set, makes the answer an agent activity on that session.
	AgentSessionID string `json:"agentSessionId,omitempty" doc:"Linear agent session the answer is an activity of."`
	// Activity is the agent activity's type (agent sessions only; default response).
	Activity string `json:"activity,omitempty" doc:"Linear agent sessions: the activity's type (thought, action, response, elicitation, error; default response)."`
	// Action names the action of an action activity; the text is its parameter.
	Action string `json:"action,omitempty" doc:"Linear agent sessions: the action an action activity names (the text is its parameter)."`
}

// PlaceCodec reads Linear places (the kinds table's row carries it).
var PlaceCodec reply.PlaceCodec = reply.Codec[Place]{}

var _ reply.Instructed = Place{}

// Activity types an answer on an agent session may take (Linear's AgentActivityType,
// less prompt, which is the person's).
const (
	ActivityThought     = "thought"
	ActivityAction      = "action"
	ActivityResponse    = "response"
	ActivityElicitation = "elicitation"
	ActivityError       = "error"
)

func activities() []string {
	return []string{ActivityThought, ActivityAction, ActivityResponse, ActivityElicitation, ActivityError}
}

// Key is the agent session, or the issue and comment thread.
func (p Place) Key() string {
	if p.AgentSessionID != "" {
		return fmt.Sprintf("session %q", p.AgentSessionID)
	}
	return fmt.Sprintf("issue %q %q", p.IssueID, p.ParentCommentID)
}

// Describe is "ENG-123 agent session S (thought)" or "ENG-123 comment thread C".
func (p Place) Describe() string {
	parts := []string{}
	if p.Issue != "" {
		parts = append(parts, p.Issue)
	}
	switch {
	case p.AgentSessionID != "":
		s := "agent session " + p.AgentSessionID
		if p.Activity != "" {
			s += " (" + p.Activity + ")"
		}
		parts = append(parts, s)
	case p.ParentCommentID != "":
		parts = append(parts, "comment thread "+p.ParentCommentID)
	}
	return strings.Join(parts, " ")
}

// WatchResource is the issue, ENG-123.
func (p Place) WatchResource() (string, bool) {
	r, err := WatchResource(p.Issue)
	if err != nil || r.Whole {
		return "", false
	}
	return r.Canonical, true
}

// Instruct is the event's place with the activity the agent asked for.
func (p Place) Instruct(asked reply.Place) reply.Place {
	if a, ok := asked.(Place); ok {
		p.Activity, p.Action = a.Activity, a.Action
	}
	return p
}

// check refuses a place no answer can be posted to.
func (p Place) check() error {
	if p.AgentSessionID == "" {
		if p.IssueID == "" {
			return errors.New("issueId or agentSessionId: required")
		}
		if p.Activity != "" || p.Action != "" {
			return errors.New("activity, action: only an answer on an agent session is an activity")
		}
		return nil
	}
	if p.Activity != "" && !slices.Contains(activities(), p.Activity) {
		return fmt.Errorf("activity: %q is not one of %s", p.Activity, strings.Join(activities(), ", "))
	}
	if (p.Activity == ActivityAction) != (p.Action != "") {
		return errors.New("action: names the action of an action activity, and only of one")
	}
	return nil
}

var (
	issueIdentifier = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_]{0,9})-([1-9][0-9]{0,8})$`)
	uuidPattern     = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// A project's slug id is the hex tail of its URL's last segment
	// (https://linear.app/acme/project/checkout-revamp-8e3a2c1b9f04).
	projectSlug = regexp.MustCompile(`^(?:[A-Za-z0-9-]*-)?([0-9a-fA-F]{12})$`)
)

// projectPrefix starts a project's watch resource.
const projectPrefix = "project:"

// WatchResource reads a Linear watch resource: an issue by its identifier ("eng-123"
// → "ENG-123"), watched until it is completed or canceled, or a whole project as
// "project:<id>" (its UUID, lower-cased) or "project:<slug>" (its URL's slug id, the
// 12 hex digits its last segment ends with, lower-cased).
func WatchResource(r string) (watch.Resource, error) {
	r = strings.TrimSpace(r)
	if p, ok := strings.CutPrefix(strings.ToLower(r), projectPrefix); ok {
		switch {
		case uuidPattern.MatchString(p):
			return watch.Resource{Canonical: projectPrefix + p, Whole: true}, nil
		case projectSlug.MatchString(p):
			return watch.Resource{Canonical: projectPrefix + projectSlug.FindStringSubmatch(p)[1], Whole: true}, nil
		}
		return watch.Resource{}, errors.New("want project:<id> (a UUID) or project:<slug id> (the 12 hex digits its URL ends with)")
	}
	if !issueIdentifier.MatchString(r) {
		return watch.Resource{}, errors.New("want an issue identifier (ENG-123) or project:<id or slug id>")
	}
	return watch.Resource{Canonical: strings.ToUpper(r)}, nil
}

// projectResources are a project's watch resources: by id and by slug id.
func projectResources(id, slug string) []string {
	var out []string
	for _, s := range []string{id, slug} {
		if r, err := WatchResource(projectPrefix + s); s != "" && err == nil {
			out = append(out, r.Canonical)
		}
	}
	return out
}
