package admin

func paths() obj {
	out := obj{}
	for _, group := range []obj{adminPaths(), agentPaths(), ingestPaths(), operationPaths(), approvalPaths(), hookPaths(), messagePaths(), replyPaths(), watchPaths(), schedulePaths(), silencePaths(), runtimePaths()} {
		for k, v := range group {
			out[k] = v
		}
	}
	return out
}

func limitParam() obj {
	return query("limit", "Page size, 1 to 500 (default 50).", obj{"type": "integer", "minimum": 1, "maximum": 500})
}

func cursorParam() obj {
	return query("cursor", "nextCursor of the previous page.", obj{"type": "string"})
}

func idParam() obj { return pathParam("id", "The id (URL-escaped).") }

func eventFilterParams() []obj {
	return []obj{
		query("source", "Source: github, slack, email, generic.", obj{"type": "string"}),
		query("connector", "Configured connector name.", obj{"type": "string"}),
		query("type", "Event type (GitHub event, Slack inner type, a generic event's kind).", obj{"type": "string"}),
		query("kind", "Another name for type.", obj{"type": "string"}),
		query("status", "What became of the event.", enum("", "routed", "unrouted", "ignored", "invalid")),
		query("duplicate", "true: only events the provider redelivered; false: only the others.", obj{"type": "boolean"}),
		query("since", "Received at or after (RFC 3339).", obj{"type": "string", "format": "date-time"}),
		query("until", "Received before (RFC 3339).", obj{"type": "string", "format": "date-time"}),
		limitParam(), cursorParam(),
	}
}

func recordFilterParams(withStatus bool) []obj {
	ps := []obj{
		query("agent", "Agent id.", obj{"type": "string"}),
		query("resource", "Resource id of the thread.", obj{"type": "string"}),
		query("thread", "Thread id.", obj{"type": "string"}),
		query("priority", "Priority.", enum("", "low", "medium", "high", "urgent")),
		query("source", "Source.", obj{"type": "string"}),
		query("kind", "Kind.", obj{"type": "string"}),
		query("text", "Case-insensitive substring of summary, kind or source (matched literally).", obj{"type": "string"}),
		query("event", "Id of the event that created the record.", obj{"type": "string"}),
		limitParam(),
	}
	if withStatus {
		ps = append(ps, query("status", "Comma list of pending, delivered, seen, dismissed, archived, discarded, failed, superseded, snoozed.", obj{"type": "string"}), cursorParam())
	}
	return ps
}

func adminPaths() obj {
	p := func(path string) string { return Prefix + path }
	return obj{
		p("/events"): obj{"get": operation("admin", "listEvents", "List events, newest first",
			"Bodies are omitted; GET /admin/v1/events/{id} has them.", eventFilterParams(), nil,
			obj{"200": jsonResponse("A page of events.", ref("EventList"))}, "400", "401", "403")},
		p("/events/{id}"): obj{"get": operation("admin", "getEvent", "Get an event with its headers and body", "",
			[]obj{idParam()}, nil, obj{"200": jsonResponse("The event.", ref("EventDetail"))}, "400", "401", "403", "404")},
		p("/events/{id}/replay"): obj{"post": operation("admin", "replayEvent", "Replay an event through today's routes and policy",
			"Stores a new event (replayOf the original, no delivery id, so provider idempotency does not block it) and creates or merges records.",
			[]obj{idParam()}, nil, obj{"200": jsonResponse("The replay.", ref("ReplayResult"))}, "400", "401", "403", "404")},
		p("/events/replay"): obj{"post": operation("admin", "replayEvents", "Replay the events a filter selects",
			"One page of the listing GET /admin/v1/events gives for the same filters is replayed, oldest first. Events that are replays themselves are skipped unless replays=true.",
			append(eventFilterParams(), query("replays", "Also replay events that are replays.", obj{"type": "boolean"})), nil,
			obj{"200": jsonResponse("What was replayed.", ref("ReplayList"))}, "400", "401", "403")},
		p("/notifications"): obj{"get": operation("admin", "listNotifications", "List notifications (inbox records), newest first", "",
			recordFilterParams(true), nil, obj{"200": jsonResponse("A page of records.", ref("RecordList"))}, "400", "401", "403")},
		p("/notifications/redeliver"): obj{"post": operation("admin", "redeliverFailed", "Queue failed notifications again",
			"Up to limit failed records matching the filters become pending and due now.", recordFilterParams(false), nil,
			obj{"200": jsonResponse("The records queued again.", ref("RedeliverList"))}, "400", "401", "403")},
		p("/notifications/{id}"): obj{"get": operation("admin", "getNotification", "Get a notification with its decision, attempts and signals", "",
			[]obj{idParam()}, nil, obj{"200": jsonResponse("The record.", ref("NotificationDetail"))}, "400", "401", "403", "404")},
		p("/notifications/{id}/dismiss"): obj{"post": operation("admin", "dismissNotification", "Dismiss a notification", "",
			[]obj{idParam()}, nil, obj{"200": jsonResponse("The record.", ref("Record"))}, "400", "401", "403", "404", "409")},
		p("/notifications/{id}/redeliver"): obj{"post": operation("admin", "redeliverNotification", "Queue a failed or delivered notification again", "",
			[]obj{idParam()}, nil, obj{"200": jsonResponse("The record, pending again.", ref("Record"))}, "400", "401", "403", "404", "409")},
		p("/threads"): obj{"get": operation("admin", "listThreads", "List threads with presence and pending counts", "Most recently active first.",
			[]obj{query("agent", "Agent id.", obj{"type": "string"}), query("resource", "Resource id.", obj{"type": "string"}),
				query("thread", "Thread id.", obj{"type": "string"}), query("presence", "Presence.", enum("", "active", "idle")),
				query("pending", "Only threads with pending records.", obj{"type": "boolean"}), limitParam(), cursorParam()},
			nil, obj{"200": jsonResponse("A page of threads.", ref("ThreadList"))}, "400", "401", "403")},
		p("/deliveries"): obj{"get": operation("admin", "listDeliveries", "The delivery attempt log, newest first",
			"Of one record, one signal, one thread (agent, resource and thread together), or everything.",
			[]obj{query("record", "Record id.", obj{"type": "string"}), query("signal", "Signal id.", obj{"type": "string"}),
				query("agent", "Agent id.", obj{"type": "string"}), query("resource", "Resource id.", obj{"type": "string"}),
				query("thread", "Thread id.", obj{"type": "string"}), limitParam(), cursorParam()},
			nil, obj{"200": jsonResponse("A page of attempts.", ref("AttemptList"))}, "400", "401", "403", "404")},
		p("/connectors"): obj{"get": operation("admin", "listConnectors", "Connector health",
			"Per configured connector: the newest event and the newest failed one; for email the mailboxes' live state and stored cursors.",
			nil, nil, obj{"200": jsonResponse("Every configured connector.", object(obj{"connectors": array(ref("ConnectorHealth"))}, "connectors"))}, "401", "403")},
		p("/connectors/{source}/{name}/refusals"): obj{"get": operation("admin", "connectorRefusals", "Why deliveries to a connector were refused",
			"The HTTP connector's last refusals, newest first: every 4xx it answered before accepting a delivery (401 not authentic, 400 a missing header, "+
				"413 over server.body_limit, 408 too slow, 404 a Slack connector in Socket Mode). Kept in this process's memory: they reset on restart and each replica keeps its own.",
			[]obj{pathParam("source", "The connector's kind (github, slack, generic)."), pathParam("name", "The configured connector name.")},
			nil, obj{"200": jsonResponse("The connector's refusals.", ref("ConnectorRefusals"))}, "400", "401", "403", "404")},
		p("/targets"): obj{"get": operation("admin", "listTargets", "Target health and backlog per agent",
			"Every configured agent's target: up or down (shared by all replicas), since when, consecutive failures, the last error (redacted), how many records wait for it and, while down, when the next probe goes out.",
			nil, nil, obj{"200": jsonResponse("Every configured agent's target.", object(obj{"targets": array(ref("TargetStatus"))}, "targets"))}, "400", "401", "403")},
		p("/explain"): obj{"post": operation("admin", "explain", "Explain what an event would do, without writing anything",
			"Which routes match, the notification each would create, whether it would dedupe or coalesce into a pending record, and the policy decision for the thread's current presence. Needs scope read.",
			nil, jsonBody("A stored event id or a sample event.", ref("Sample"), true),
			obj{"200": jsonResponse("The explanation.", ref("Explanation"))}, "400", "401", "403", "404")},
	}
}

func agentPaths() obj {
	base := "/v1/agents/{agent}/threads/{resourceId}/{threadId}"
	thread := []obj{pathParam("agent", "Agent id."), pathParam("resourceId", "Resource id (URL-escaped)."), pathParam("threadId", "Thread id (URL-escaped).")}
	with := func(extra ...obj) []obj { return append(append([]obj{}, thread...), extra...) }
	runID := pathParam("runId", "Run id.")
	notifID := pathParam("id", "Record id.")
	return obj{
		base + "/stream": obj{"get": operation("agent", "streamThread", "Follow the thread's signals and runs (SSE)",
			"text/event-stream: `id:` the thread's sequence, `event: signal | run`, `data:` one JSON object (Frame); `: keep-alive` every 25 s. Resume with Last-Event-ID or ?after=<seq>|latest; ?after=latest first writes an `id:` line (no data) with the position it resolved to. At most agents[].max_streams streams per agent token and max_streams_per_thread per thread are open at once, and at most three quarters of server.max_connections streams of all agents and console viewers together; beyond, 429.",
			with(header("Last-Event-ID", "Sequence of the last frame received.", false), query("after", "A sequence, or latest.", obj{"type": "string"})),
			nil, obj{"200": obj{"description": "The stream.", "content": obj{"text/event-stream": obj{"schema": ref("Frame")}}},
				"429": errorResponse("The agent token's or the thread's open streams are at their cap (rate_limited).")}, "400", "401", "403", "404")},
		base + "/runs": obj{"post": operation("agent", "openRun", "Open a run (the thread turns active)",
			"Returns the live run when there is one (200), or a new one (201).", thread, nil,
			obj{"200": jsonResponse("The live run.", ref("Run")), "201": jsonResponse("A new run.", ref("Run"))}, "400", "401", "403", "404")},
		base + "/runs/{runId}/heartbeat": obj{"post": operation("agent", "heartbeatRun", "Extend a run's lease", "", with(runID), nil,
			obj{"200": jsonResponse("The run.", ref("Run"))}, "400", "401", "403", "404", "409")},
		base + "/runs/{runId}/finish": obj{"post": operation("agent", "finishRun", "Finish or abort a run", "", with(runID),
			jsonBody("Optional status.", object(obj{"status": enum("finished (default) or aborted", "finished", "aborted")}), false),
			obj{"200": jsonResponse("The run.", ref("Run"))}, "400", "401", "403", "404", "409")},
		base + "/signals": obj{"post": operation("agent", "sendSignal", "Send a signal to the thread", "Mastra's body: signal, runId, resourceId, threadId, ifActive, ifIdle.", thread,
			jsonBody("The signal and its delivery options.", ref("SignalRequest"), true),
			obj{"200": jsonResponse("What was done (also for the same signal sent again under its id).", ref("SignalResponse")), "502": errorResponse("The agent's target did not take the signal."),
				"429": errorResponse("The signal would wake the idle thread and the agent's max_concurrent_wakes wake runs are open (wakes_full): nothing was sent; send it again with the same id after Retry-After.")}, "400", "401", "403", "404", "409")},
		base + "/notifications": obj{
			"post": operation("agent", "createNotification", "Create a notification on the thread",
				"The connectors' path: an event with one notification, deduplicated, coalesced and decided by the policy. "+
					"An array of up to 100 is one event, answered as an array of results in input order.", with(header("Idempotency-Key", "Makes a retried create (or batch) a no-op.", false)),
				jsonBody("The notification, or an array of up to 100.", obj{"oneOf": []obj{ref("NotificationRequest"), obj{"type": "array", "minItems": 1, "maxItems": 100, "items": ref("NotificationRequest")}}}, true),
				obj{"200": jsonResponse("Merged, or a duplicate (an array for an array).", obj{"oneOf": []obj{ref("NotificationResponse"), array(ref("NotificationResponse"))}}),
					"201": jsonResponse("Created (for an array: any created).", obj{"oneOf": []obj{ref("NotificationResponse"), array(ref("NotificationResponse"))}})}, "400", "401", "403", "404"),
			"get": operation("agent", "listThreadNotifications", "List the thread's notifications, newest first",
				"Pending and delivered by default. Read-only: listing and searching change nothing.",
				with(query("status", "all, or a comma list of pending, delivered, seen, dismissed, archived, discarded, failed, superseded, snoozed (default pending,delivered).", obj{"type": "string"}), query("q", "Substring of summary, kind or source (at most 512 bytes).", obj{"type": "string"}),
					query("source", "A comma list of sources (at most 20).", obj{"type": "string"}), query("kind", "A comma list of kinds (at most 20).", obj{"type": "string"}),
					query("limit", "1 to 200.", obj{"type": "integer"}), query("cursor", "nextCursor of the previous page.", obj{"type": "string"}),
					query("markSeen", "Deprecated: only false is accepted (listing never marks records seen).", obj{"type": "boolean"})),
				nil, obj{"200": jsonResponse("A page.", object(obj{"notifications": array(ref("Record")), "nextCursor": str("")}, "notifications"))}, "400", "401", "403", "404"),
		},
		base + "/notifications/read": obj{"post": operation("agent", "readNotifications", "Read unread notifications in full and mark them seen", "", thread,
			jsonBody("Optional ids to read.", object(obj{"ids": array(obj{"type": "string"})}), false),
			obj{"200": jsonResponse("The notifications with their XML.", object(obj{"notifications": array(ref("Record"))}, "notifications"))}, "400", "401", "403", "404")},
		base + "/notifications/{id}": obj{"get": operation("agent", "getThreadNotification", "Get one of the thread's notifications", "", with(notifID), nil,
			obj{"200": jsonResponse("The record.", ref("Record"))}, "400", "401", "403", "404")},
		"/mcp": obj{"post": operation("agent", "mcp", "The agent inbox as MCP tools (streamable HTTP, stateless)",
			"Model Context Protocol JSON-RPC messages (initialize, tools/list, tools/call) with the agent's bearer token; the answer is application/json. "+
				"Tools: inbox_list, inbox_search, inbox_read, inbox_dismiss, inbox_archive, inbox_snooze, notify, notification-inbox (Mastra's inbox tool), and where a connector sends replies reply and reply_status, each taking resourceId and threadId. "+
				"No session is kept between requests (no Mcp-Session-Id); GET and DELETE are 405. A tool's failure is a result with isError, not an HTTP error.",
			nil, jsonBody("A JSON-RPC message (or a batch of at most 16), at most 1 MiB.", obj{"type": "object"}, true),
			obj{"200": jsonResponse("The JSON-RPC answer.", obj{"type": "object"}),
				"400": plainResponse("Not a JSON-RPC message, a batch of more than 16 messages, or an unsupported MCP-Protocol-Version."),
				"401": plainResponse("No or an unknown agent token (WWW-Authenticate: Bearer)."),
				"413": plainResponse("Over 1 MiB."),
				"415": plainResponse("Content-Type is not application/json.")})},
		base + "/notifications/{id}/snooze": obj{"post": operation("agent", "snoozeNotification", "Snooze a pending notification until a time",
			"Hidden until then (not delivered, summarised or counted as backlog), then decided again by the policy as if it had just arrived. "+
				"A merge into it while snoozed is absorbed and stays hidden, unless it is urgent, which ends the snooze at once.",
			with(notifID), jsonBody("When the snooze ends.", object(obj{"until": str("RFC 3339 time in the future, at most 30 days ahead.")}, "until"), true),
			obj{"200": jsonResponse("The record, snoozed.", ref("Record"))}, "400", "401", "403", "404", "409")},
		base + "/notifications/{id}/{action}": obj{"post": operation("agent", "actOnNotification", "Mark a notification seen, dismissed or archived", "",
			with(notifID, obj{"name": "action", "in": "path", "required": true, "schema": enum("", "seen", "dismiss", "archive")}), nil,
			obj{"200": jsonResponse("The record.", ref("Record"))}, "400", "401", "403", "404", "409")},
	}
}

func ingestPaths() obj {
	connector := pathParam("connector", "The configured connector name.")
	answers := func() obj {
		return obj{
			"200": jsonResponse("Stored and routed, or a redelivery (duplicate).", ref("IngestOutcome")),
			"202": jsonResponse("Stored; no route wanted it (unrouted or ignored), or a verified body the connector cannot read (invalid, kept for replay).", ref("IngestOutcome")),
			"408": errorResponse("The body did not arrive within server.body_timeout; the connection is closed."),
			"413": errorResponse("Over server.body_limit."),
			"503": errorResponse("server.max_body_reads bodies are being received already (Retry-After: 5)."),
		}
	}
	linearAnswers := answers()
	linearAnswers["503"] = errorResponse("server.max_body_reads bodies are being received already (Retry-After: 5), or Linear's API could not say whether the author may reach the agent (Linear delivers again).")
	raw := obj{"description": "The provider's request body, verbatim.", "required": true, "content": obj{
		"application/json": obj{"schema": obj{"type": "object"}}}}
	return obj{
		"/webhooks/github/{connector}": obj{"post": operation("ingest", "githubWebhook", "GitHub webhook",
			"Verified with X-Hub-Signature-256; X-GitHub-Delivery is the delivery id, and a body already stored under another id is a redelivery.",
			[]obj{connector, header("X-Hub-Signature-256", "sha256=HMAC of the body.", true), header("X-GitHub-Event", "Event type.", true),
				header("X-GitHub-Delivery", "Delivery id.", true)}, raw, answers(), "400", "401", "404")},
		"/webhooks/slack/{connector}": obj{"post": operation("ingest", "slackEvents", "Slack Events API",
			"Verified with X-Slack-Signature (v0, 5-minute window); answers url_verification with its challenge; event_id is the delivery id.",
			[]obj{connector, header("X-Slack-Signature", "v0= signature.", true), header("X-Slack-Request-Timestamp", "Unix seconds.", true)},
			raw, answers(), "400", "401", "404")},
		"/webhooks/generic/{connector}": obj{"post": operation("ingest", "genericWebhook", "Generic signed webhook (Standard Webhooks)",
			"webhook-id is the delivery id; webhook-timestamp within 5 minutes. Without a mapping the body is a native notification (kind or summary; source, summary, priority, payload, dedupeKey, coalesceKey, attributes, metadata, and netKey, state, restState for a net-state lane) or a Standard Webhooks envelope {type, timestamp, data}.",
			[]obj{connector, header("webhook-id", "Delivery id.", true), header("webhook-timestamp", "Unix seconds.", true),
				header("webhook-signature", "v1,<base64 HMAC-SHA256>.", true)}, raw, answers(), "400", "401", "404")},
		"/webhooks/alertmanager/{connector}": obj{"post": operation("ingest", "alertmanagerWebhook", "Alertmanager or Grafana alerting webhook",
			"Alertmanager's webhook notification (version 4) or Grafana's (version 1), authenticated by the connector's bearer_token or basic_auth (what http_config sends) and, when configured, Grafana's HMAC signature. Each alert is an item in the net-state lane alert:<fingerprint>, state firing or resolved (rest resolved). The delivery id is the SHA-256 of the body: a retried notification is a duplicate.",
			[]obj{connector, header("Authorization", "Bearer <bearer_token>, or Basic with basic_auth.", false),
				header("X-Grafana-Alerting-Signature", "Grafana: hex HMAC-SHA256 of the body, or of <timestamp>:<body> (the header's name is the connector's grafana_hmac.header).", false)},
			raw, answers(), "400", "401", "404")},
		"/webhooks/linear/{connector}": obj{"post": operation("ingest", "linearWebhook", "Linear webhook",
			"Linear's webhook deliveries (Issue, Comment, Project and AgentSessionEvent; other types are stored ignored). The body's webhookTimestamp (unix milliseconds) must be within a minute. 503 when Linear's API cannot say who may reach the agent (Linear delivers again).",
			[]obj{connector, header("Linear-Delivery", "Delivery id.", true), header("Linear-Event", "The payload's type.", false),
				header("Linear-Signature", "Hex HMAC-SHA256 of the body with the webhook's signing secret.", true)},
			raw, linearAnswers, "400", "401", "404")},
	}
}

// reloadOperation is POST /-/reload: an admin operation (write scope) outside the prefix.
func reloadOperation() obj {
	op := operation("operations", "reload", "Re-read the config file",
		"Re-reads the config file the gateway was started with, and every secret file its <key>_file keys name, and puts routes, "+
			"policy, agents, connectors, watches and schedules in force without dropping connections, streams or deliveries in flight "+
			"(as SIGHUP does; gateway reload calls it). On PostgreSQL every replica then re-reads its own file. An invalid file, a "+
			"${VAR} the process does not have (it keeps the environment it started with), or a change to a key that cannot change "+
			"live (server.*, storage.*, log.*, dispatch.*, telemetry.*), is refused with 400 naming it, and the running config stays. "+
			"Needs an admin token with the write scope.",
		nil, nil, obj{"200": jsonResponse("Reloaded.", object(obj{"status": str("")}, "status"))}, "400", "401", "403")
	op["security"] = []obj{{"adminToken": []string{}}}
	return op
}

func operationPaths() obj {
	status := func(desc string) obj {
		return jsonResponse(desc, object(obj{"status": str("")}, "status"))
	}
	return obj{
		"/": obj{"get": operation("operations", "root", "Sends a browser to the web console", "", nil, nil,
			obj{"303": obj{"description": "See Other: Location /console."}})},
		"/healthz": obj{"get": operation("operations", "healthz", "The process is up", "", nil, nil, obj{"200": status("ok")})},
		"/readyz": obj{"get": operation("operations", "readyz", "The database is reachable and migrated", "", nil, nil,
			obj{"200": status("ready"), "503": status("unavailable (the cause is logged, not served)")})},
		"/metrics": obj{"get": operation("operations", "metrics", "Prometheus metrics", "", nil, nil,
			obj{"200": obj{"description": "Prometheus text format.", "content": obj{"text/plain": obj{"schema": obj{"type": "string"}}}}})},
		ReloadPath: obj{"post": reloadOperation()},
		"/openapi.json": obj{"get": operation("operations", "openapi", "This document", "", nil, nil,
			obj{"200": jsonResponse("OpenAPI 3.1.", obj{"type": "object"})})},
	}
}
