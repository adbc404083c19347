package admin

// runtimePaths are the endpoints agent runtimes post their own webhooks to (target kinds
// whose presence comes from the runtime).
func runtimePaths() obj {
	query := func(name, desc string) obj {
		return obj{"name": name, "in": "query", "required": true, "description": desc, "schema": obj{"type": "string"}}
	}
	return obj{
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
	}
}
