package admin

// runtimePaths are the endpoints agent runtimes post their own webhooks and notifications
// to (target kinds whose presence comes from the runtime): one route per kind, whose
// {agent} names the agent of that kind.
func runtimePaths() obj {
	query := func(name, desc string) obj {
		return obj{"name": name, "in": "query", "required": true, "description": desc, "schema": obj{"type": "string"}}
	}
	a2aEvent := obj{"description": "An A2A task event: v1.0's StreamResponse ({statusUpdate}, {artifactUpdate}, {task} or {message}), or v0.3's whole Task.",
		"required": true, "content": obj{"application/json": obj{"schema": obj{"type": "object"}},
			"application/a2a+json": obj{"schema": obj{"type": "object"}}}}
	return obj{
		"/targets/a2a/{agent}/push": obj{"post": operation("runtime", "a2aPush", "A2A push notification",
			"Where an a2a agent's tasks post their push notifications (registered with each task the gateway opens, when target.callback_url is set and the agent's card says it sends them). "+
				"The token the task was registered with must come in X-A2A-Notification-Token (compared in constant time); the context's current task only. At most 4 MiB.",
			[]obj{pathParam("agent", "The a2a agent."), header("X-A2A-Notification-Token", "The task's push token.", true)}, a2aEvent,
			obj{"204": obj{"description": "Applied."}, "413": errorResponse("Over 4 MiB."),
				"503": errorResponse("The task record cannot be read now.")}, "400", "401", "404")},
		"/targets/langgraph/{agent}/webhook": obj{"post": operation("runtime", "langgraphRunWebhook", "A LangGraph run ended",
			"The webhook each run the gateway starts on a LangGraph Agent Server carries (target.callback_url set). The server signs nothing: "+
				"the URL the gateway made carries sig, an HMAC-SHA256 keyed by target.callback_token of the thread and run, and a URL it did not make is refused. "+
				"The body (the run as the server posts it) only names the run that ended; the gateway reads the thread from the server before changing its presence. "+
				"Answered at once, the body read whole: the JS server waits for the answer in the worker that ran the run.",
			[]obj{pathParam("agent", "The langgraph agent."), query("resource", "The thread's resource."), query("thread", "The thread."),
				query("run", "The gateway run the LangGraph run was started for (may be empty)."), query("sig", "The URL's signature.")},
			obj{"description": "The run, as the server posts it (any content type).", "required": false,
				"content": obj{"application/json": obj{"schema": obj{"type": "object"}}, "text/plain": obj{"schema": obj{"type": "string"}}}},
			obj{"204": obj{"description": "Taken: the thread is read from the server."}}, "400", "401", "404")},
		"/targets/openai-agents/{agent}/webhook": sessionWebhook("openai-agents", "openaiAgentsSessionWebhook", "An OpenAI Agents API session changed",
			"agent.session.in_progress, agent.session.idle, agent.session.action_required and agent.session.failed (other types are taken and dropped). "+
				"Verified as the openai library's webhooks.unwrap verifies them: a signature with or without its v1, prefix."),
		"/targets/claude-agents/{agent}/webhook": sessionWebhook("claude-agents", "claudeAgentsSessionWebhook", "An Anthropic managed agent session changed",
			"data.type session.status_run_started, session.status_idled, session.requires_action and session.status_terminated (session.running and session.idled too; other types are taken and dropped). "+
				"Verified as @anthropic-ai/sdk's webhooks.unwrap (standardwebhooks) verifies them: v1, required."),
	}
}

// sessionWebhook is the endpoint a hosted session kind's session webhooks reach.
func sessionWebhook(kind, id, summary, events string) obj {
	return obj{"post": operation("runtime", id, summary,
		"The session webhooks of the platform, signed as Standard Webhooks with target.webhook_secret (webhook-id, webhook-timestamp within 5 minutes either way, webhook-signature). "+
			events+" The body names only the session: the gateway finds the thread whose session it is (a session it did not create is taken and ignored) and reads the session before changing the thread's presence.",
		[]obj{pathParam("agent", "The "+kind+" agent.")},
		obj{"description": "The event, as the platform posts it (at most 64 KiB).", "required": true,
			"content": obj{"application/json": obj{"schema": obj{"type": "object"}}}},
		obj{"204": obj{"description": "Taken."}}, "400", "401", "404")}
}
