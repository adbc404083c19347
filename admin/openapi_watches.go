package admin

// watchPaths documents watches: the agent API's create, list and delete, and the admin
// listing, detail and delete.
func watchPaths() obj {
	p := func(path string) string { return Prefix + path }
	base := "/v1/agents/{agent}/threads/{resourceId}/{threadId}"
	thread := []obj{pathParam("agent", "Agent id."), pathParam("resourceId", "Resource id (URL-escaped)."), pathParam("threadId", "Thread id (URL-escaped).")}
	return obj{
		base + "/watches": obj{
			"post": operation("agent", "createWatch", "Watch something for this thread",
				"Creates a durable watch: events of the resource reach this thread through its inbox whether or not a route matches them, from now on (nothing older is delivered because of it), "+
					"until until/ttl (default watches.default_ttl, at most watches.max_ttl) or the thing's terminal state (a merged or closed pull request, a closed issue; until: forever keeps it past that). "+
					"The thread then gets one watch-ended notification saying why. The same source, connector and resource again answers the thread's live watch with 200. "+
					"The connector must be one the agent's routes or agents[].watch_connectors allow (403 naming them); a GitHub repository the connector receives no events for is a 400.",
				thread, jsonBody("What to watch.", ref("WatchRequest"), true),
				obj{"201": jsonResponse("The watch, created.", ref("Watch")),
					"200": jsonResponse("The thread's live watch of the same source, connector and resource.", ref("Watch")),
					"429": errorResponse("The agent holds watches.max_per_agent live watches.")},
				"400", "401", "403", "404"),
			"get": operation("agent", "listWatches", "This thread's watches", "Newest first; live ones unless status says otherwise.",
				append(append([]obj{}, thread...), query("status", "live (default), ended or all.", obj{"type": "string", "enum": []string{"live", "ended", "all"}}),
					query("limit", "At most this many (1-200, default 50).", obj{"type": "integer"}), query("cursor", "The previous page's nextCursor.", obj{"type": "string"})), nil,
				obj{"200": jsonResponse("The thread's watches, newest first.", ref("WatchList"))}, "400", "401", "403", "404"),
		},
		base + "/watches/{id}": obj{
			"get": operation("agent", "getWatch", "One watch of this thread", "Another thread's watch is a 404.",
				append(append([]obj{}, thread...), idParam()), nil, obj{"200": jsonResponse("The watch.", ref("Watch"))}, "401", "403", "404"),
			"delete": operation("agent", "deleteWatch", "Stop a watch of this thread",
				"Ends it (reason deleted), without a watch-ended notification: the agent asked. A watch that had ended already is answered as it is.",
				append(append([]obj{}, thread...), idParam()), nil, obj{"200": jsonResponse("The watch, ended.", ref("Watch"))}, "400", "401", "403", "404")},
		p("/watches"): obj{"get": operation("admin", "listWatchesAdmin", "List watches, newest first",
			"resourceId and threadId name one thread and go together with agent.",
			[]obj{query("agent", "Agent id.", obj{"type": "string"}), query("resourceId", "The thread's resource id (with agent and threadId).", obj{"type": "string"}),
				query("threadId", "The thread's id (with agent and resourceId).", obj{"type": "string"}),
				query("source", "github, slack, email or generic.", obj{"type": "string"}),
				query("connector", "Connector name.", obj{"type": "string"}),
				query("resource", "The watched resource in its canonical form (owner/repo#7, C0123/1712345678.000100, a Message-ID, a generic sourceId or netKey).", obj{"type": "string"}),
				query("status", "live (default): not ended; ended; all.", enum("", "live", "ended", "all")),
				limitParam(), cursorParam()},
			nil, obj{"200": jsonResponse("A page of watches.", ref("AdminWatchList"))}, "400", "401", "403")},
		p("/watches/{id}"): obj{
			"get": operation("admin", "getWatchAdmin", "Get a watch", "", []obj{idParam()}, nil,
				obj{"200": jsonResponse("The watch.", ref("AdminWatch"))}, "400", "401", "403", "404"),
			"delete": operation("admin", "deleteWatchAdmin", "End a watch",
				"Ends it with reason operator; its thread gets one watch-ended notification. A watch that had ended already is answered as it is (200).",
				[]obj{idParam()}, nil, obj{"200": jsonResponse("The watch, ended.", ref("AdminWatch"))}, "400", "401", "403", "404"),
		},
	}
}

// watchSchemas are the watch schemas; sources are those a watch may name.
func watchSchemas(sources []string) obj {
	priority := enum("The priority of the records it makes (default: the event's).", "low", "medium", "high", "urgent")
	w := object(obj{
		"id": str("w- and a time-ordered UUID."), "source": sourceEnum("", sources),
		"connector": str("The connector's name."),
		"resource":  str("What is watched, canonical: GitHub owner/repo#number or owner/repo, Slack channel or channel/threadTs, an email Message-ID without angle brackets, a generic sourceId or netKey."),
		"kinds":     array(str("A kind or a glob over kinds (pr-*).")), "priority": priority,
		"forever":   boolean("Kept past the thing's terminal state (until: forever)."),
		"createdAt": timestamp("Nothing that happened before is delivered because of the watch."),
		"expiresAt": timestamp("When it ends by itself."), "endedAt": timestamp("When it ended."),
		"endReason": enum("Why it ended.", "expired", "merged", "closed", "deleted", "operator"),
		"replyId":   str("The reply sent with watch: true that created it."),
	}, "id", "source", "connector", "resource", "createdAt", "expiresAt")
	return obj{
		"WatchRequest": object(obj{
			"source":    sourceEnum("", sources),
			"connector": str("The connector's name; may be left out when the agent may watch one connector of the source."),
			"resource":  obj{"type": "string", "maxLength": 512, "description": "What to watch: GitHub owner/repo#number (an issue or pull request) or owner/repo (the connector needs watch_repositories: true); Slack channel or channel/threadTs; email a Message-ID; generic a sourceId or netKey."},
			"kinds":     obj{"type": "array", "maxItems": 20, "items": obj{"type": "string", "maxLength": 100}, "description": "Only these item kinds (globs allowed); empty: all."},
			"until":     str("An RFC 3339 time, or forever (past terminal states, still at most watches.max_ttl)."),
			"ttl":       str("A duration like 48h instead of until."),
			"priority":  priority,
		}, "source", "resource"),
		"Watch":     w,
		"WatchList": object(obj{"watches": array(ref("Watch")), "nextCursor": str("The cursor of the next page, when there is one.")}, "watches"),
		"AdminWatch": obj{"allOf": []obj{ref("Watch"), object(obj{"agent": str(""), "resourceId": str(""), "threadId": str("")},
			"agent", "resourceId", "threadId")}},
		"AdminWatchList": object(obj{"watches": array(ref("AdminWatch")), "nextCursor": str("")}, "watches"),
	}
}
