package admin

import "github.com/signalgate/signalgate/reply"

// replyPaths documents the reply outbox: the agent API's replies and the admin listing
// and retry.
func replyPaths() obj {
	p := func(path string) string { return Prefix + path }
	base := "/v1/agents/{agent}/threads/{resourceId}/{threadId}"
	thread := []obj{pathParam("agent", "Agent id."), pathParam("resourceId", "Resource id (URL-escaped)."), pathParam("threadId", "Thread id (URL-escaped).")}
	return obj{
		base + "/replies": obj{"post": operation("agent", "createReply", "Answer where the thread's notification came from",
			"Queues a reply in the durable outbox; 202 once it is on disk. The gateway posts it once (a Slack DM or thread, a GitHub issue, PR or review thread, an email reply), retrying transient platform errors with backoff within replies.max_age. "+
				"replyTo defaults to the thread's most recent origin (the newest notification's metadata.replyTo); a replyTo given must name a place a notification of this thread came from (400 otherwise). "+
				"Only a record its own connector kind verified names a place (a Slack place on slack-v0 or slack-socket-mode, GitHub on hmac-github, email on imap-login). "+
				"The same id again answers the reply as it is now; other text, or another thread, under a used id is 409 (ids are unique gateway-wide: they are the marker the post carries). "+
				"With approval (or agents[].replies.approval: required) the reply is pending until an approver decides in Slack; approval without approvals.slack_connector is 409 no_approvers. "+
				"With watch, the watch goes through the agent's watch scope: a watch the scope refuses is refused as POST …/watches refuses it (403 forbidden, 400 unknown_resource) and nothing is queued.",
			thread, jsonBody("The reply.", ref("ReplyRequest"), true),
			obj{"202": jsonResponse("The reply, queued (or as it is, for an id used before).", ref("Reply")),
				"403": errorResponse("The token cannot reach this agent's threads, or watch is asked where the agent may not watch through the place's connector (code forbidden)."),
				"409": errorResponse("The id is used by another reply (code conflict), the connector has no credentials for replies (code no_credentials, naming the missing key), or approval is asked and no approvers are configured (code no_approvers, naming approvals.slack_connector)."),
				"413": errorResponse("The text is over the platform's limit (Slack 40,000 characters, GitHub 65,536) (code too_long).")},
			"400", "401", "404")},
		base + "/replies/{id}": obj{"get": operation("agent", "getReply", "A reply of this thread", "",
			append(thread, idParam()), nil, obj{"200": jsonResponse("The reply.", ref("Reply"))}, "400", "401", "403", "404")},
		p("/replies"): obj{"get": operation("admin", "listReplies", "List replies, newest first", "",
			[]obj{query("agent", "Agent id.", obj{"type": "string"}), query("resource", "Resource id.", obj{"type": "string"}),
				query("thread", "Thread id.", obj{"type": "string"}), query("source", "slack, github or email.", obj{"type": "string"}),
				query("connector", "Connector name.", obj{"type": "string"}),
				query("status", "Comma list of queued, sent, failed, pending, declined.", obj{"type": "string"}), limitParam(), cursorParam()},
			nil, obj{"200": jsonResponse("A page of replies.", ref("ReplyList"))}, "400", "401", "403")},
		p("/replies/{id}"): obj{"get": operation("admin", "getReplyAdmin", "Get a reply", "", []obj{idParam()}, nil,
			obj{"200": jsonResponse("The reply.", ref("AdminReply"))}, "400", "401", "403", "404")},
		p("/replies/{id}/retry"): obj{"post": operation("admin", "retryReply", "Send a failed reply again",
			"Queues it again, due now, with replies.max_age counted afresh; it is looked for on the platform first when it was attempted before. Only a failed reply (409 otherwise).",
			[]obj{idParam()}, nil, obj{"200": jsonResponse("The reply, queued.", ref("AdminReply"))}, "400", "401", "403", "404", "409")},
	}
}

// replySchemas are the reply outbox's schemas; replyTo has the sources and the place
// fields of places.
func replySchemas(places reply.Places) (obj, error) {
	props := obj{"source": sourceEnum("Which platform.", places.Sources()), "connector": str("The connector's name.")}
	fields, err := places.Fields()
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		props[f.Name] = fieldSchema(f)
	}
	replyTo := object(props, "source", "connector")
	reply := object(obj{
		"id": str("The agent's id."), "text": str("Markdown."), "replyTo": ref("ReplyTo"), "watch": boolean(""),
		"status":   enum("queued: on disk, waiting to be sent or retried; sent; failed (lastError says why; retryable from the admin API); pending: waiting for an approver; declined.", "queued", "sent", "failed", "pending", "declined"),
		"attempts": integer("Sends begun."), "nextAttemptAt": timestamp("When it is next tried (queued)."),
		"lastError":  str("The last platform error, credentials removed."),
		"platformId": str("Once sent: Slack `<channel>/<ts>`, GitHub comment id, email Message-ID."),
		"url":        str("Once sent: a link to the post, when the platform has one."),
		"sentAt":     timestamp(""), "createdAt": timestamp(""), "updatedAt": timestamp(""),
	}, "id", "text", "replyTo", "status", "attempts", "createdAt", "updatedAt")
	admin := obj{"allOf": []obj{ref("Reply"), object(obj{"agent": str(""), "resourceId": str(""), "threadId": str("")},
		"agent", "resourceId", "threadId")}}
	return obj{
		"ReplyTo": replyTo,
		"ReplyRequest": object(obj{
			"id":      obj{"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$", "description": "Unique gateway-wide; the same id again is the same reply."},
			"text":    obj{"type": "string", "minLength": 1, "description": "Markdown, converted for the platform."},
			"replyTo": ref("ReplyTo"), "watch": boolean("Hear further messages of that conversation."),
			"approval": boolean("Ask an approver first."),
		}, "id", "text"),
		"Reply":      reply,
		"AdminReply": admin,
		"ReplyList":  object(obj{"replies": array(ref("AdminReply")), "nextCursor": str("")}, "replies"),
	}, nil
}

// fieldSchema is a place field's schema.
func fieldSchema(f reply.Field) obj {
	if f.Type == "array" {
		o := array(obj{"type": f.Items})
		if f.Doc != "" {
			o["description"] = f.Doc
		}
		return o
	}
	return obj{"type": f.Type, "description": f.Doc}
}
