package admin

func schemas(sources []string) obj {
	attrs := obj{"type": "object", "description": "Attributes in insertion order; values are strings, numbers or booleans."}
	meta := obj{"type": "object", "description": "Free-form metadata; never shown to the model."}
	priority := enum("", "low", "medium", "high", "urgent")
	status := enum("", "pending", "delivered", "seen", "dismissed", "archived", "discarded", "failed", "superseded")
	netKey := str("Net-state lane: the thing whose state this reports (at most 255 bytes, longer keys are stored hashed). A newer record of the lane supersedes a pending one.")
	netState := str("Net-state lane: the state reported (at most 200 bytes); needs netKey.")
	restState := str("Net-state lane: the state that needs no attention (at most 200 bytes); needs netKey.")
	netDecision := object(obj{
		"netKey": str(""), "state": str(""), "restState": str(""),
		"told": str("The state the model was last told in the lane."), "hasTold": boolean("False: nothing told, the state is compared with restState."),
		"supersedes": array(obj{"type": "string"}), "coalescedCount": integer("The new record's count, carried on from what it supersedes."),
		"unchanged": boolean("The state is what the model knows: the record is superseded on arrival and reaches nothing."),
		"reason":    str("e.g. net state unchanged: success"),
	}, "netKey", "hasTold", "coalescedCount", "unchanged", "reason")
	eventStatus := enum("", "routed", "unrouted", "ignored", "invalid")
	action := enum("", "deliver", "queue", "summarize", "defer", "log", "persist", "discard")
	next := str("Pass as cursor for the next page; absent on the last page.")
	return obj{
		"Error": object(obj{"error": object(obj{
			"code":    str("Machine-readable: bad_request, unauthorized, forbidden, not_found, conflict, …"),
			"message": str("Human-readable; names the parameter or field at fault."),
		}, "code", "message")}, "error"),
		"ThreadKey": object(obj{"agent": str(""), "resourceId": str(""), "threadId": str("")}, "agent", "resourceId", "threadId"),
		"Event": object(obj{
			"id": str(""), "source": str(""), "connector": str(""),
			"deliveryId": str("The provider's delivery id (X-GitHub-Delivery, event_id, Message-ID, webhook-id)."),
			"type":       str("Provider event type."), "headers": obj{"type": "object", "additionalProperties": obj{"type": "string"}},
			"receivedAt": timestamp(""), "status": eventStatus, "error": str("Why it was not parsed or routed."),
			"replayOf": str("The event this one replays."), "records": integer("Records created or merged from it."),
			"redeliveries": integer("Later provider deliveries of the same id (acknowledged, ignored)."),
		}, "id", "source", "connector", "type", "receivedAt", "status", "records", "redeliveries"),
		"EventList": object(obj{"events": array(ref("Event")), "nextCursor": next}, "events"),
		"EventDetail": obj{"allOf": []obj{ref("Event"), object(obj{
			"body":           str("The body when it is UTF-8 text."),
			"bodyBase64":     str("The body when it is not."),
			"createdRecords": array(ref("Record")),
		}, "createdRecords")}},
		"Decision": object(obj{
			"action": action, "deliverAt": timestamp(""), "summaryAt": timestamp(""),
			"fullWhenIdle": boolean("Deliver in full once the thread turns idle."), "reason": str("Which policy layer decided and why."),
		}, "action", "reason"),
		"Notification": object(obj{
			"thread": ref("ThreadKey"), "route": str(""), "source": str(""), "kind": str(""), "priority": priority,
			"summary": str(""), "payload": obj{}, "dedupeKey": str(""), "coalesceKey": str(""), "attributes": attrs,
			"metadata": meta, "deliverAs": enum("", "message", "queued-message"),
			"netKey": netKey, "state": netState, "restState": restState,
		}, "thread", "source", "kind", "summary"),
		"Record": object(obj{
			"id": str(""), "thread": ref("ThreadKey"), "eventId": str(""), "route": str(""), "source": str(""), "kind": str(""),
			"priority": priority, "summary": str("What the model reads."), "payload": obj{"description": "Hidden from the model."},
			"dedupeKey": str(""), "coalesceKey": str(""), "attributes": attrs, "metadata": meta, "deliverAs": str(""),
			"netKey": netKey, "state": netState, "restState": restState,
			"supersededBy": str("The newer record of the net-state lane that replaced this one."),
			"status":       status, "coalescedCount": integer(""), "action": action,
			"deliveryReason": str("The policy decision's reason."), "deliverAt": timestamp(""), "summaryAt": timestamp(""),
			"operatorAction": str("The last operator action on the record (a redelivery), beside the policy's decision."),
			"fullWhenIdle":   boolean(""), "attempts": integer("Delivery attempts so far, across redeliveries and the record's summary."), "nextAttemptAt": timestamp(""),
			"lastError": str("The last delivery error."), "deliveredSignalId": str(""), "summarySignalId": str(""),
			"createdAt": timestamp(""), "updatedAt": timestamp(""), "deliveredAt": timestamp(""),
		}, "id", "thread", "source", "kind", "priority", "summary", "status", "coalescedCount", "action", "deliveryReason", "attempts", "createdAt", "updatedAt"),
		"RecordList": object(obj{"notifications": array(ref("Record")), "nextCursor": next}, "notifications"),
		"RecordOutcome": object(obj{"recordId": str(""), "thread": ref("ThreadKey"), "merged": boolean("Absorbed by a pending record."),
			"decision": ref("Decision"), "net": ref("NetDecision")}, "recordId", "thread", "merged", "decision"),
		"NetDecision": netDecision,
		"ReplayResult": object(obj{"replayOf": str(""), "eventId": str("The new event."), "status": eventStatus, "error": str(""),
			"records": array(ref("RecordOutcome"))}, "replayOf", "eventId", "status", "records"),
		"ReplayList": object(obj{"replayed": array(ref("ReplayResult")), "skipped": integer("Listed replays not replayed again."),
			"nextCursor": next}, "replayed", "skipped"),
		"RedeliverList": object(obj{"redelivered": array(obj{"type": "string"}), "more": boolean("More failed records matched than the limit.")},
			"redelivered", "more"),
		"EventRef": object(obj{"id": str(""), "type": str(""), "status": eventStatus, "error": str(""), "receivedAt": timestamp("")},
			"id", "type", "status", "receivedAt"),
		"Attempt": object(obj{
			"id": integer(""), "thread": ref("ThreadKey"), "target": enum("", "stream", "mastra", "webhook"), "signalId": str(""),
			"recordIds": array(obj{"type": "string"}), "attempt": integer(""), "outcome": enum("", "delivered", "retry", "failed"),
			"statusCode": integer("HTTP status of the target, when it answered."), "error": str(""),
			"durationNs": integer(""), "at": timestamp(""),
		}, "id", "thread", "target", "signalId", "recordIds", "attempt", "outcome", "at"),
		"AttemptList": object(obj{"deliveries": array(ref("Attempt")), "nextCursor": next}, "deliveries"),
		"NotificationDetail": obj{"allOf": []obj{ref("Record"), object(obj{
			"event":      nullable(ref("EventRef")),
			"deliveries": array(ref("Attempt")),
			"signals":    array(ref("Frame")),
		}, "event", "deliveries", "signals")}},
		"ActiveRun": object(obj{"runId": str(""), "origin": enum("", "agent", "wake"), "since": timestamp(""), "leaseUntil": timestamp("")},
			"runId", "origin", "since", "leaseUntil"),
		"PendingCounts": object(obj{"urgent": integer(""), "high": integer(""), "medium": integer(""), "low": integer(""), "total": integer("")},
			"urgent", "high", "medium", "low", "total"),
		"Thread": object(obj{
			"agent": str(""), "resourceId": str(""), "threadId": str(""), "presence": enum("", "active", "idle"),
			"activeRun": ref("ActiveRun"), "pending": ref("PendingCounts"), "failed": integer("Dead letters."),
			"lastSeq": integer("Sequence of the thread's newest frame."), "createdAt": timestamp(""), "updatedAt": timestamp("Last activity."),
		}, "agent", "resourceId", "threadId", "presence", "pending", "failed", "lastSeq", "createdAt", "updatedAt"),
		"ThreadList": object(obj{"threads": array(ref("Thread")), "nextCursor": next}, "threads"),
		"MailboxStatus": object(obj{
			"mailbox": str(""), "state": enum("", "stopped", "standby", "connecting", "syncing", "idle", "waiting", "backoff"),
			"connected": boolean(""), "idleActive": boolean("IMAP IDLE running."), "lastPoll": timestamp(""), "lastError": str(""),
			"lastErrorAt": timestamp(""), "uidValidity": integer(""), "lastUid": integer("The cursor."), "stored": integer(""), "reconnects": integer(""),
		}, "mailbox", "state", "connected", "idleActive", "stored", "reconnects"),
		"TargetStatus": object(obj{
			"agent": str(""), "kind": enum("", "stream", "mastra", "webhook"),
			"state":               enum("After target.failure_threshold consecutive failed attempts the target is down: its records wait, one probe per target.probe_interval.", "up", "down"),
			"since":               timestamp("When the target entered its state; absent for a target that never failed."),
			"consecutiveFailures": integer(""), "lastError": str("The last failure, credentials redacted."),
			"lastErrorAt": timestamp(""), "backlog": integer("Pending records due, or waiting for a retry."),
			"nextProbeAt": timestamp("While down: when the next probe goes out."),
		}, "agent", "state", "consecutiveFailures", "backlog"),
		"ConnectorHealth": object(obj{
			"source": str(""), "name": str(""), "lastEvent": nullable(ref("EventRef")),
			"lastError": nullable(ref("EventRef")), "mailboxes": array(ref("MailboxStatus")),
			"cursors": obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": "Stored mailbox cursors, uidvalidity:uid."},
		}, "source", "name", "lastEvent", "lastError"),
		"Sample": object(obj{
			"eventId": str("A stored event; or give the sample fields below."), "source": sourceEnum("", sources),
			"connector": str("The configured connector name."), "type": str("Event type; else read from the headers."),
			"deliveryId": str("Else read from the headers or body."), "headers": obj{"type": "object", "additionalProperties": obj{"type": "string"}},
			"body":       obj{"description": "The raw body as a JSON string, or the JSON document itself."},
			"bodyBase64": str("The raw body, base64."),
		}),
		"Explanation": object(obj{
			"at":          timestamp("The time the policy was evaluated at."),
			"event":       object(obj{"id": str(""), "source": str(""), "connector": str(""), "type": str(""), "deliveryId": str("")}, "source", "connector"),
			"duplicateOf": str("A stored event with the same delivery id: a real delivery would change nothing."),
			"status":      eventStatus, "reason": str(""),
			"items": array(object(obj{
				"kind": str(""), "priority": priority, "summary": str(""), "dedupeKey": str(""), "coalesceKey": str(""),
				"attributes": attrs, "fields": obj{"type": "object", "description": "Route match keys and their values."},
				"skip": str("Why the connector keeps it out of routing."), "netKey": netKey, "state": netState, "restState": restState,
			}, "kind", "summary", "attributes", "fields")),
			"routes": array(object(obj{
				"route": str(""), "item": integer(""), "matched": boolean(""), "thread": ref("ThreadKey"),
				"error": str("Matched, but the thread did not render; or why match.when could not be evaluated (a non-match)."), "sameThreadAs": str("An earlier route feeds this thread already."),
				"when": str("The route's match.when expression, evaluated once its other match fields held."),
			}, "route", "item", "matched")),
			"routesNote": str("Why routes is empty: the connector produced nothing to route (and why), or no routes are configured."),
			"notifications": array(object(obj{
				"route": str(""), "thread": ref("ThreadKey"), "notification": ref("Notification"), "presence": enum("", "active", "idle"),
				"activeRun": ref("ActiveRun"),
				"merge": object(obj{"recordId": str(""), "on": enum("", "dedupeKey", "coalesceKey"), "record": ref("Record")},
					"recordId", "on", "record"),
				"decision": ref("Decision"), "record": ref("Record"),
				"net": obj{"allOf": []obj{ref("NetDecision")}, "description": "A notification with a netKey: the lane's verdict (it never merges)."},
				"wake": object(obj{
					"budget": str("agents[].wake_budget as max/per, e.g. 6/1h."), "used": integer("Wakes inside the budget's window."),
					"spent": boolean(""), "freesAt": timestamp("When the oldest wake of the window leaves it (budget spent)."),
					"maxConcurrent": integer("agents[].max_concurrent_wakes."), "openWakes": integer("The agent's wake runs open now."),
					"queuedSince": timestamp("Set while the thread waits for a wake slot."), "note": str("What a wake would do."),
				}, "used", "spent", "openWakes", "note"),
			}, "route", "thread", "notification", "presence", "decision", "record")),
		}, "at", "event", "status", "items", "routes", "notifications"),
		"IngestOutcome": object(obj{"eventId": str(""), "duplicate": boolean(""), "status": eventStatus, "records": integer("")},
			"eventId", "duplicate", "status", "records"),
		"Frame": object(obj{
			"id": str("Signal id (stable across retries) or run frame id."), "seq": integer("The thread's sequence; the SSE id."),
			"runId": obj{"type": []string{"string", "null"}}, "action": enum("signal frames", "wake", "deliver", "persist"),
			"type": str("Signal type."), "tagName": str(""), "contents": str(""), "attributes": attrs, "metadata": meta,
			"xml": str("What the model sees."), "status": str("Run frames: open, finished, expired, aborted."),
			"origin": str("Run frames: agent, wake."), "createdAt": timestamp(""), "acceptedAt": timestamp(""),
		}, "id", "seq"),
		"Run": object(obj{"runId": str(""), "thread": ref("ThreadKey"), "status": enum("", "open", "finished", "expired", "aborted"),
			"origin": enum("", "agent", "wake"), "openedAt": timestamp(""), "leaseUntil": timestamp(""), "closedAt": timestamp("")},
			"runId", "thread", "status", "origin", "openedAt", "leaseUntil"),
		"SignalRequest": object(obj{
			"signal": object(obj{"id": str(""), "type": enum("", "user", "state", "reactive", "notification", "user-message", "system-reminder"),
				"tagName": str(""), "contents": str(""), "attributes": attrs, "metadata": meta, "cacheKey": str("State signals."),
				"mode": enum("State signals.", "snapshot", "delta")}, "type"),
			"ifActive": object(obj{"behavior": enum("", "deliver", "persist", "discard"), "attributes": attrs}),
			"ifIdle":   object(obj{"behavior": enum("", "wake", "persist", "discard"), "attributes": attrs, "streamOptions": obj{"type": "object"}, "runOptions": obj{"type": "object", "deprecated": true}}),
		}, "signal"),
		"SignalResponse": object(obj{"id": str(""), "action": enum("", "wake", "deliver", "persist", "discard"), "runId": str(""),
			"skipped": str(""), "version": integer("State signals: the lane's version.")}, "action"),
		"NotificationRequest": object(obj{
			"source": str("Default agent-api."), "kind": str(""), "summary": str(""), "priority": priority, "payload": obj{},
			"dedupeKey": str(""), "coalesceKey": str(""), "attributes": attrs, "metadata": meta,
			"deliverAs": enum("", "message", "queued-message"), "deliveryId": str("Makes a retried create a no-op."),
			"netKey": netKey, "state": netState, "restState": restState,
			"ifIdle": object(obj{"streamOptions": obj{"type": "object", "description": "Passed to a mastra target's wake of this record (stored on it)."}}),
		}, "kind", "summary"),
		"NotificationResponse": object(obj{"eventId": str(""), "duplicate": boolean(""), "recordId": str(""), "merged": boolean(""),
			"decision": ref("Decision"), "net": ref("NetDecision")}, "eventId", "duplicate", "merged", "decision"),
	}
}
