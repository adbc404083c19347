package linear

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Kinds of the items the connector makes.
const (
	KindIssuePrefix       = "issue."         // + Linear's action: create, update, remove
	KindCommentCreated    = "comment.create" // a new comment
	KindProjectPrefix     = "project."       // + Linear's action
	KindSessionCreated    = "agent_session.created"
	KindSessionPrompted   = "agent_session.prompted"
	messageLen, bodyLen   = 4000, 16000
	promptContextLen      = 16000
	reasonNotMember       = "author not authorized"
	reasonNotCreator      = "prompt not from the person who started the agent session"
	reasonOtherWorkspace  = "event of another workspace"
	reasonOtherAgent      = "agent session of another agent"
	reasonNotMapped       = "not mapped"
	stateCompleted        = "completed"
	stateCanceled         = "canceled"
	actorTypeUser         = "user"
	agentSessionEventType = "AgentSessionEvent"
)

// spec is what one delivery maps to before it is an item.
type spec struct {
	kind, summary string
	priority      inbox.Priority
	author        *user // who wrote or did it (nil: not a user)
	objectID      string
	issue         *issueRef
	place         *Place
	payload       map[string]any
	message       string
	at            time.Time
	resources     []string
	ends          string
	labels        []string
	extra         map[string]string
	skip          string
	coalesce      string
	url           string
	thread        string // the default thread (the issue, or the project)
}

// item turns a spec into the connector's item.
func (c *conn) item(s *spec, delivery string) connectors.Item {
	name := ""
	email := ""
	if s.author != nil {
		name, email = s.author.Name, s.author.Email
	}
	who := cmp.Or(email, name)
	attrs := inbox.Attributes{}
	if s.issue != nil && s.issue.Identifier != "" {
		attrs = attrs.Set("issue", s.issue.Identifier)
	}
	if s.url != "" {
		attrs = attrs.Set("url", s.url)
	}
	if name != "" {
		attrs = attrs.Set("author", name)
	}
	meta := map[string]any{
		connectors.MetaVerifiedBy:  VerifiedBy,
		connectors.MetaAuthor:      who,
		connectors.MetaAuthorIsBot: false,
	}
	if delivery != "" {
		meta["delivery_id"] = delivery
	}
	if s.place != nil {
		meta[reply.MetadataKey] = reply.NewTo(Source, c.cfg.Name, *s.place)
	}
	extra := map[string]string{}
	for k, v := range s.extra {
		if v != "" {
			extra[k] = v
		}
	}
	coalesce := "linear:" + cmp.Or(s.coalesce, s.kind+":"+s.objectID)
	payload, _ := json.Marshal(s.payload)
	it := connectors.Item{
		Kind:        s.kind,
		Priority:    s.priority,
		Summary:     s.summary,
		Payload:     payload,
		DedupeKey:   "linear:" + s.kind + ":" + s.objectID,
		CoalesceKey: coalesce,
		SourceID:    s.objectID,
		Attributes:  attrs,
		Metadata:    meta,
		Fields: connectors.Fields{
			Source: Source, Connector: c.cfg.Name, Kind: s.kind, Author: who, Labels: s.labels, Extra: extra,
		},
		Skip:           s.skip,
		OccurredAt:     s.at,
		WatchResources: s.resources,
		Ends:           s.ends,
	}
	if s.issue != nil && s.issue.Identifier != "" {
		it.SourceID = s.issue.Identifier
		if n, err := strconv.Atoi(s.issue.Identifier[strings.LastIndexByte(s.issue.Identifier, '-')+1:]); err == nil {
			it.Fields.Number = n
		}
	}
	if s.message != "" {
		it.Message = &connectors.Message{Name: cmp.Or(name, email), From: Source, Text: s.message}
	}
	if s.thread != "" {
		it.DefaultResource, it.DefaultThread = Source+"/"+c.cfg.Name, s.thread
	}
	return it
}

// issueSpec maps an Issue event.
func issueSpec(e *envelope) (*spec, error) {
	var d issueData
	if err := json.Unmarshal(e.Data, &d); err != nil || d.ID == "" || d.Identifier == "" {
		return nil, fmt.Errorf("data: not an issue (%s)", problem(err))
	}
	ref := &issueRef{ID: d.ID, Identifier: strings.ToUpper(d.Identifier), Title: d.Title, URL: d.URL, Team: d.Team}
	stateName, stateType := "", ""
	if d.State != nil {
		stateName, stateType = d.State.Name, d.State.Type
	}
	who := actorName(e.Actor)
	title := fmt.Sprintf("%s %q", ref.Identifier, d.Title)
	s := &spec{
		kind: KindIssuePrefix + e.Action, priority: issuePriority(d.Priority), author: actorUser(e.Actor),
		objectID: d.ID + ":" + cmp.Or(d.UpdatedAt, e.CreatedAt), issue: ref, url: cmp.Or(d.URL, e.URL),
		at: when(cmp.Or(d.UpdatedAt, e.CreatedAt)), coalesce: "issue:" + d.ID, thread: ref.Identifier,
		payload: map[string]any{"identifier": ref.Identifier, "title": d.Title, "url": d.URL, "state": stateName,
			"state_type": stateType, "priority": d.PriorityLabel, "action": e.Action},
		extra:     map[string]string{"issue": ref.Identifier, "team": teamKey(d.Team), "state": stateType, "project": d.ProjectID, "action": e.Action},
		resources: append([]string{ref.Identifier}, projectResources(d.ProjectID, "")...),
		place:     &Place{Issue: ref.Identifier, IssueID: d.ID},
	}
	for _, l := range d.Labels {
		s.labels = append(s.labels, l.Name)
	}
	switch e.Action {
	case "create":
		s.summary = withExcerpt(fmt.Sprintf("%s created issue %s", who, title), d.Description)
		s.message = messageText(d.Description)
		s.payload["description"] = plainBody(d.Description)
	case "update":
		s.summary = fmt.Sprintf("%s updated issue %s (%s).", who, title, cmp.Or(stateName, "no state"))
		if updated := updatedKeys(e); updated != "" {
			s.payload["changed"] = updated
		}
	case "remove":
		s.summary = fmt.Sprintf("%s deleted issue %s.", who, title)
		s.ends = watch.EndClosed
	default:
		s.summary = fmt.Sprintf("%s: %s on issue %s.", who, e.Action, title)
	}
	if stateType == stateCompleted || stateType == stateCanceled {
		s.ends = watch.EndClosed
		s.summary = fmt.Sprintf("Issue %s is %s (%s).", title, stateType, cmp.Or(stateName, stateType))
	}
	return s, nil
}

// commentSpec maps a Comment event: a new comment on an issue is a message whose answer
// is a reply in its thread.
func commentSpec(e *envelope) (*spec, error) {
	var d commentData
	if err := json.Unmarshal(e.Data, &d); err != nil || d.ID == "" {
		return nil, fmt.Errorf("data: not a comment (%s)", problem(err))
	}
	if e.Action != "create" {
		return nil, nil // edits and deletions are not news to the agent
	}
	author := d.User
	if author == nil && d.UserID != "" {
		author = &user{ID: d.UserID}
	}
	s := &spec{
		kind: KindCommentCreated, priority: inbox.PriorityHigh, author: author, objectID: d.ID,
		message: messageText(d.Body), at: when(d.CreatedAt), url: e.URL,
		payload: map[string]any{"comment_id": d.ID, "body": plainBody(d.Body), "url": e.URL},
		extra:   map[string]string{"action": e.Action, "project": d.ProjectID},
	}
	who := cmp.Or(userName(author), "Someone")
	switch {
	case d.Issue != nil || d.IssueID != "":
		ref := d.Issue
		if ref == nil {
			ref = &issueRef{ID: d.IssueID}
		}
		ref.Identifier = strings.ToUpper(ref.Identifier)
		s.issue = ref
		s.summary = withExcerpt(fmt.Sprintf("%s commented on %s", who, issueTitle(ref)), d.Body)
		s.place = &Place{Issue: ref.Identifier, IssueID: cmp.Or(ref.ID, d.IssueID), ParentCommentID: cmp.Or(d.ParentID, d.ID)}
		s.coalesce = "issue:" + cmp.Or(ref.ID, d.IssueID) + ":comments"
		s.extra["issue"], s.extra["team"] = ref.Identifier, teamKey(ref.Team)
		s.payload["issue"] = ref.Identifier
		if ref.Identifier != "" {
			s.resources, s.thread = []string{ref.Identifier}, ref.Identifier
		}
	case d.ProjectID != "":
		s.summary = withExcerpt(fmt.Sprintf("%s commented on a project", who), d.Body)
		s.resources = projectResources(d.ProjectID, "")
		s.thread = "project-" + d.ProjectID
	default:
		s.summary = withExcerpt(who+" commented", d.Body)
	}
	return s, nil
}

// projectSpec maps a Project event.
func projectSpec(e *envelope) (*spec, error) {
	var d projectData
	if err := json.Unmarshal(e.Data, &d); err != nil || d.ID == "" {
		return nil, fmt.Errorf("data: not a project (%s)", problem(err))
	}
	status, statusType := "", ""
	if d.Status != nil {
		status, statusType = d.Status.Name, d.Status.Type
	}
	who := actorName(e.Actor)
	s := &spec{
		kind: KindProjectPrefix + e.Action, priority: inbox.PriorityMedium, author: actorUser(e.Actor),
		objectID: d.ID + ":" + cmp.Or(d.UpdatedAt, e.CreatedAt), url: cmp.Or(d.URL, e.URL), at: when(cmp.Or(d.UpdatedAt, e.CreatedAt)),
		coalesce: "project:" + d.ID, resources: projectResources(d.ID, d.SlugID), thread: "project-" + cmp.Or(d.SlugID, d.ID),
		payload: map[string]any{"project_id": d.ID, "name": d.Name, "url": d.URL, "status": status, "status_type": statusType, "action": e.Action},
		extra:   map[string]string{"project": d.ID, "state": statusType, "action": e.Action},
	}
	s.summary = fmt.Sprintf("%s: %s project %q (%s).", who, e.Action, d.Name, cmp.Or(status, "no status"))
	if e.Action == "remove" || statusType == stateCompleted || statusType == stateCanceled || d.CompletedAt != "" || d.CanceledAt != "" {
		s.ends = watch.EndClosed
	}
	return s, nil
}

// sessionSpec maps an AgentSessionEvent: the agent was mentioned or delegated an issue
// (created), or the person wrote to it again (prompted). Its answer is an activity on
// the session.
func sessionSpec(e *envelope) (*spec, error) {
	as := e.AgentSession
	if as == nil || as.ID == "" {
		return nil, fmt.Errorf("agentSession: required on an %s", agentSessionEventType)
	}
	s := &spec{
		priority: inbox.PriorityHigh, url: as.URL, at: when(cmp.Or(as.CreatedAt, e.CreatedAt)),
		coalesce: "session:" + as.ID, place: &Place{AgentSessionID: as.ID},
		payload: map[string]any{"agent_session_id": as.ID, "action": e.Action},
		extra:   map[string]string{"agent_session": as.ID, "action": e.Action},
	}
	if ref := as.Issue; ref != nil && ref.Identifier != "" {
		ref.Identifier = strings.ToUpper(ref.Identifier)
		s.issue = ref
		s.place.Issue, s.place.IssueID = ref.Identifier, cmp.Or(ref.ID, as.IssueID)
		s.resources, s.thread = []string{ref.Identifier}, ref.Identifier
		s.extra["issue"], s.extra["team"] = ref.Identifier, teamKey(ref.Team)
		s.payload["issue"], s.payload["issue_title"], s.payload["issue_url"] = ref.Identifier, ref.Title, ref.URL
	} else {
		s.thread = "session-" + as.ID
	}
	where := "in Linear"
	if s.issue != nil {
		where = "on " + issueTitle(s.issue)
	}
	switch e.Action {
	case "created":
		s.kind, s.objectID, s.author = KindSessionCreated, as.ID, as.Creator
		if s.author == nil && as.CreatorID != "" {
			s.author = &user{ID: as.CreatorID}
		}
		text := ""
		if as.Comment != nil {
			text = as.Comment.Body
		}
		s.message = messageText(cmp.Or(text, e.PromptContext))
		s.summary = withExcerpt(fmt.Sprintf("%s asked the agent %s", cmp.Or(userName(s.author), "Someone"), where), text)
		if e.PromptContext != "" {
			s.payload["prompt_context"] = connectors.Truncate(e.PromptContext, promptContextLen)
		}
	case "prompted":
		act := e.AgentActivity
		if act == nil || act.ID == "" {
			return nil, fmt.Errorf("agentActivity: required on a prompted %s", agentSessionEventType)
		}
		s.kind, s.objectID, s.author = KindSessionPrompted, as.ID+":"+act.ID, act.User
		if s.author == nil && act.UserID != "" {
			s.author = &user{ID: act.UserID}
		}
		s.message = messageText(act.Content.Body)
		s.summary = withExcerpt(fmt.Sprintf("%s wrote to the agent %s", cmp.Or(userName(s.author), "Someone"), where), act.Content.Body)
		if act.Signal == "stop" {
			s.summary = fmt.Sprintf("%s asked the agent to stop %s.", cmp.Or(userName(s.author), "Someone"), where)
		}
		s.payload["activity_id"], s.payload["body"], s.payload["signal"] = act.ID, plainBody(act.Content.Body), act.Signal
		s.at = when(cmp.Or(act.CreatedAt, e.CreatedAt))
	default:
		return nil, nil
	}
	return s, nil
}

func issuePriority(p float64) inbox.Priority {
	switch p { // Linear: 0 none, 1 urgent, 2 high, 3 medium, 4 low
	case 1:
		return inbox.PriorityUrgent
	case 2:
		return inbox.PriorityHigh
	case 4:
		return inbox.PriorityLow
	}
	return inbox.PriorityMedium
}

// actorUser is the actor when it is a person (a user); nil for an application, an
// integration or an external user.
func actorUser(a *actor) *user {
	if a == nil || !strings.EqualFold(a.Type, actorTypeUser) || a.ID == "" {
		return nil
	}
	return &user{ID: a.ID, Name: a.Name, Email: a.Email, URL: a.URL}
}

func actorName(a *actor) string {
	if a == nil || a.Name == "" {
		return "Someone"
	}
	return a.Name
}

func userName(u *user) string {
	if u == nil {
		return ""
	}
	return cmp.Or(u.Name, u.Email)
}

func teamKey(t *team) string {
	if t == nil {
		return ""
	}
	return t.Key
}

func issueTitle(r *issueRef) string {
	if r.Title == "" {
		return cmp.Or(r.Identifier, "an issue")
	}
	return fmt.Sprintf("%s %q", cmp.Or(r.Identifier, "issue"), r.Title)
}

// updatedKeys names what an update changed (updatedFrom's keys).
func updatedKeys(e *envelope) string {
	return strings.Join(slices.Sorted(maps.Keys(e.UpdatedFrom)), ",")
}

func withExcerpt(sentence, body string) string {
	if ex := connectors.Excerpt(body, connectors.ExcerptLen); ex != "" {
		return sentence + ": " + ex
	}
	return sentence + "."
}

func plainBody(s string) string   { return connectors.Truncate(connectors.PlainText(s), bodyLen) }
func messageText(s string) string { return connectors.Truncate(connectors.PlainText(s), messageLen) }

func problem(err error) string {
	if err == nil {
		return "no id"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("field %q has the wrong type", te.Field)
	}
	return "unexpected shape"
}
