package github

import "slices"

// MappedEvents lists the webhook event types (X-GitHub-Event) the connector turns
// into items, in the order GitHub's settings page should have them ticked. Every
// other type is stored and ignored. The setup helper prints this list, so a
// mapping added here reaches the user's webhook settings.
func MappedEvents() []string {
	return []string{
		"check_run", "check_suite", "workflow_run", "pull_request", "pull_request_review",
		"pull_request_review_comment", "issue_comment", "issues", "push", "deployment_status",
		"release", "dependabot_alert", "code_scanning_alert", "secret_scanning_alert",
	}
}

// mappedEvent reports the event types the connector turns into items.
func mappedEvent(t string) bool { return slices.Contains(MappedEvents(), t) }
