package admin

// hookPaths documents the agent API's endpoint for Claude Code's HTTP hooks.
func hookPaths() obj {
	base := "/v1/agents/{agent}/threads/{resourceId}/{threadId}"
	thread := []obj{pathParam("agent", "Agent id."), pathParam("resourceId", "Resource id (URL-escaped)."), pathParam("threadId", "Thread id (URL-escaped).")}
	return obj{
		base + "/hooks/claude-code": obj{"post": operation("agent", "claudeCodeHook", "Claude Code's HTTP hooks: the session's turns as the thread's presence",
			"The body is the hook input Claude Code posts; only hook_event_name is read, other fields are ignored. UserPromptSubmit and PostToolUse make the thread active (the live run's lease renewed, or a run opened); Stop ends the live run as finished; StopFailure and SessionEnd end it as aborted (its signals are delivered again in the next run). See docs/claude-code.md.",
			thread, jsonBody("Claude Code's hook input.", object(obj{
				"hook_event_name": enum("The hook event.", "UserPromptSubmit", "PostToolUse", "Stop", "StopFailure", "SessionEnd"),
				"session_id":      str("Claude Code's session id (not read)."),
			}, "hook_event_name"), true),
			obj{"200": jsonResponse("Done: an empty object (no instructions for Claude Code).", object(obj{}))}, "400", "401", "403", "404")},
	}
}
