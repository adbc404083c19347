package linear

import (
	"encoding/json"
	"strings"
	"time"
)

// The shapes below are those @linear/sdk's webhook types give (EntityWebhookPayload with
// its IssueWebhookPayload, CommentWebhookPayload and ProjectWebhookPayload data, and
// AgentSessionEventWebhookPayload), cut to the fields the connector reads.

// envelope is every delivery: an entity event (type Issue, Comment, Project… with its
// data) or an AgentSessionEvent.
type envelope struct {
	Action         string          `json:"action"`
	Type           string          `json:"type"`
	Actor          *actor          `json:"actor"`
	CreatedAt      string          `json:"createdAt"`
	Data           json.RawMessage `json:"data"`
	URL            string          `json:"url"`
	OrganizationID string          `json:"organizationId"`
	WebhookID      string          `json:"webhookId"`
	// UpdatedFrom holds an update's previous values, by field.
	UpdatedFrom map[string]json.RawMessage `json:"updatedFrom"`
	// AgentSessionEvent's own.
	AgentSession  *agentSession  `json:"agentSession"`
	AgentActivity *agentActivity `json:"agentActivity"`
	AppUserID     string         `json:"appUserId"`
	PromptContext string         `json:"promptContext"`
}

// actor is who caused an entity event: a user, an OAuth client (an application), an
// integration or an external user; its type says which.
type actor struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Name  string `json:"name"`
	Email string `json:"email"`
	URL   string `json:"url"`
}

// user is a UserChildWebhookPayload.
type user struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	URL   string `json:"url"`
}

type team struct {
	ID   string `json:"id"`
	Key  string `json:"key"`
	Name string `json:"name"`
}

// issueRef is an IssueChildWebhookPayload (IssueWithDescriptionChildWebhookPayload with
// its description).
type issueRef struct {
	ID          string `json:"id"`
	Identifier  string `json:"identifier"`
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Team        *team  `json:"team"`
}

// issueData is an IssueWebhookPayload.
type issueData struct {
	ID            string  `json:"id"`
	Identifier    string  `json:"identifier"`
	Number        float64 `json:"number"`
	Title         string  `json:"title"`
	Description   string  `json:"description"`
	URL           string  `json:"url"`
	Priority      float64 `json:"priority"`
	PriorityLabel string  `json:"priorityLabel"`
	State         *struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"state"`
	Team      *team  `json:"team"`
	ProjectID string `json:"projectId"`
	Labels    []struct {
		Name string `json:"name"`
	} `json:"labels"`
	Assignee    *user  `json:"assignee"`
	Delegate    *user  `json:"delegate"`
	CreatorID   string `json:"creatorId"`
	UpdatedAt   string `json:"updatedAt"`
	CompletedAt string `json:"completedAt"`
	CanceledAt  string `json:"canceledAt"`
}

// commentData is a CommentWebhookPayload.
type commentData struct {
	ID             string    `json:"id"`
	Body           string    `json:"body"`
	IssueID        string    `json:"issueId"`
	Issue          *issueRef `json:"issue"`
	ParentID       string    `json:"parentId"`
	ProjectID      string    `json:"projectId"`
	UserID         string    `json:"userId"`
	User           *user     `json:"user"`
	ExternalUserID string    `json:"externalUserId"`
	CreatedAt      string    `json:"createdAt"`
}

// projectData is a ProjectWebhookPayload.
type projectData struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	SlugID      string `json:"slugId"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Status      *struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"status"`
	CompletedAt string `json:"completedAt"`
	CanceledAt  string `json:"canceledAt"`
	UpdatedAt   string `json:"updatedAt"`
}

// agentSession is an AgentSessionWebhookPayload.
type agentSession struct {
	ID        string    `json:"id"`
	AppUserID string    `json:"appUserId"`
	CreatorID string    `json:"creatorId"`
	Creator   *user     `json:"creator"`
	IssueID   string    `json:"issueId"`
	Issue     *issueRef `json:"issue"`
	CommentID string    `json:"commentId"`
	Comment   *struct {
		ID     string `json:"id"`
		Body   string `json:"body"`
		UserID string `json:"userId"`
	} `json:"comment"`
	Status    string `json:"status"`
	URL       string `json:"url"`
	CreatedAt string `json:"createdAt"`
}

// agentActivity is an AgentActivityWebhookPayload: for a prompted event, the person's
// prompt ({"type": "prompt", "body": …}).
type agentActivity struct {
	ID             string `json:"id"`
	AgentSessionID string `json:"agentSessionId"`
	UserID         string `json:"userId"`
	User           *user  `json:"user"`
	Signal         string `json:"signal"`
	Content        struct {
		Type string `json:"type"`
		Body string `json:"body"`
	} `json:"content"`
	CreatedAt string `json:"createdAt"`
}

// when reads one of Linear's ISO 8601 times (zero when absent or unreadable).
func when(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}
