package admin

// approvalPaths documents tool approvals: the admin listing, the agent API's request
// and Slack's interactivity endpoint.
func approvalPaths() obj {
	p := func(path string) string { return Prefix + path }
	base := "/v1/agents/{agent}/threads/{resourceId}/{threadId}"
	thread := []obj{pathParam("agent", "Agent id."), pathParam("resourceId", "Resource id (URL-escaped)."), pathParam("threadId", "Thread id (URL-escaped).")}
	return obj{
		p("/approvals"): obj{"get": operation("admin", "listApprovals", "List tool approvals, newest first",
			"Pending and decided approvals: Mastra runs suspended on a tool that needs approval, and approvals stream and webhook agents requested.",
			[]obj{query("agent", "Agent id.", obj{"type": "string"}), query("resource", "Resource id.", obj{"type": "string"}),
				query("thread", "Thread id.", obj{"type": "string"}), query("tool", "Tool name.", obj{"type": "string"}),
				query("status", "Comma list of pending, approved, declined, expired, answered.", obj{"type": "string"}), limitParam(), cursorParam()},
			nil, obj{"200": jsonResponse("A page of approvals.", ref("ApprovalList"))}, "400", "401", "403")},
		p("/approvals/{id}"): obj{"get": operation("admin", "getApproval", "Get a tool approval", "", []obj{idParam()}, nil,
			obj{"200": jsonResponse("The approval.", ref("Approval"))}, "400", "401", "403", "404")},
		base + "/approvals": obj{"post": operation("agent", "requestApproval", "Ask people in Slack to approve a tool call",
			"For stream and webhook agents (a mastra agent's tools ask through Mastra's requireApproval). The approval is posted to approvals.channel, or to the DM or thread of the thread's last Slack message, with Approve and Decline buttons. The decision comes back to the thread as a signal `<approval tool=\"…\" decision=\"approved|declined|expired\" by=\"Jane\">description</approval>` (type reactive, delivered into the active run or waking the idle thread). A resend with the same id returns the first approval (200).",
			thread, jsonBody("The tool call.", ref("ApprovalRequest"), true),
			obj{"200": jsonResponse("The approval already requested under this id.", ref("Approval")),
				"201": jsonResponse("A new approval.", ref("Approval")), "413": errorResponse("arguments over 8 KiB.")}, "400", "401", "403", "404")},
		"/webhooks/slack/{connector}/interactions": obj{"post": operation("ingest", "slackInteractions", "Slack interactivity (approval buttons)",
			"Form-encoded `payload` (a block_actions interaction), verified exactly like the Events API (X-Slack-Signature v0, 5-minute window, server.body_limit). A click by an approver decides a pending approval once; anyone else, a second click and a stale approval get an ephemeral answer and change nothing.",
			[]obj{pathParam("connector", "The configured connector name."), header("X-Slack-Signature", "v0= signature.", true),
				header("X-Slack-Request-Timestamp", "Unix seconds.", true)},
			obj{"description": "Slack's form body.", "required": true, "content": obj{"application/x-www-form-urlencoded": obj{
				"schema": object(obj{"payload": str("The interaction JSON.")}, "payload")}}},
			obj{"200": jsonResponse("Handled or ignored.", object(obj{"status": enum("", "ok", "ignored"), "reason": str("")}, "status")),
				"202": jsonResponse("Verified but unreadable.", object(obj{"status": enum("", "invalid"), "error": str("")}, "status")),
				"413": errorResponse("Over server.body_limit.")}, "401", "404")},
	}
}

func approvalSchemas(runtimes []string) obj {
	status := enum("", "pending", "approved", "declined", "expired", "answered")
	return obj{
		"Approval": object(obj{
			"id": str(""), "agent": str(""), "resourceId": str(""), "threadId": str(""),
			"origin": enum("Who asked: the agent API, or the runtime of a target kind that reports its runs (a Mastra run, a LangGraph interrupt(), an A2A task waiting for input, a hosted session that requires an action).", append([]string{"api"}, runtimes...)...), "runId": str("Mastra's run id; for langgraph and the hosted session kinds, the gateway run the call came in; for a2a, the task's id."),
			"kind":       enum("approval: decided with the Approve and Decline buttons; question: a Mastra tool that suspended for an answer (ask_user), or a LangGraph interrupt(), answered by an approver's threaded Slack reply.", "approval", "question"),
			"answer":     str("The reply that answered a question."),
			"toolCallId": str("The call waiting (Mastra's toolCallId, the LangGraph interrupt's id, or the agent's id)."), "tool": str(""),
			"arguments":          obj{"description": "The call's JSON arguments (at most 8 KiB; when cut, a JSON string of the first bytes)."},
			"argumentsTruncated": boolean(""), "description": str(""), "status": status,
			"connector": str("The Slack connector."), "channel": str(""), "messageTs": str("The Slack message."), "threadTs": str(""),
			"postError": str("Why the Slack message could not be posted."),
			"decidedBy": str("Slack user id."), "decidedByName": str(""), "decidedAt": timestamp(""),
			"createdAt": timestamp(""), "expiresAt": timestamp("Pending past this expires (approvals.expire_after)."),
			"updatedAt": timestamp(""),
		}, "id", "agent", "resourceId", "threadId", "origin", "toolCallId", "tool", "status", "createdAt", "expiresAt", "updatedAt"),
		"ApprovalList": object(obj{"approvals": array(ref("Approval")), "nextCursor": str("Pass as cursor for the next page; absent on the last page.")}, "approvals"),
		"ApprovalRequest": object(obj{
			"id":          str("Your id for the call (optional): a resend with it returns the first approval."),
			"tool":        str("The tool that needs approval (at most 200 bytes)."),
			"arguments":   obj{"description": "The call's arguments, any JSON (at most 8 KiB)."},
			"description": str("What the agent wants to do, for the people deciding (at most 2000 bytes)."),
		}, "tool"),
	}
}
