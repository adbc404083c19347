package admin

// messagePaths documents the agent API's cancel of queued messages.
func messagePaths() obj {
	base := "/v1/agents/{agent}/threads/{resourceId}/{threadId}"
	thread := []obj{pathParam("agent", "Agent id."), pathParam("resourceId", "Resource id (URL-escaped)."), pathParam("threadId", "Thread id (URL-escaped).")}
	return obj{
		base + "/messages/cancel": obj{"post": operation("agent", "cancelQueuedMessages", "Cancel queued messages not yet handed over",
			"Mastra's cancelQueuedMessages: dismisses the thread's messages (notifications created with deliverAs queued-message or message) that are still pending, named by the signal id they are handed over under or by their record id. "+
				"Ids that name nothing cancellable (unknown, another thread's, a notification, a message already handed over or moved) are simply left out of the answer; so is everything while a delivery pass holds the thread (it may be handing the messages over at that moment). An id in the answer never reaches the agent.",
			thread, jsonBody("The ids, at most 100.", ref("CancelMessagesRequest"), true),
			obj{"200": jsonResponse("The ids, as given, of the messages cancelled (possibly none).", ref("CancelMessagesResponse"))}, "400", "401", "403", "404")},
	}
}

func messageSchemas() obj {
	return obj{
		"CancelMessagesRequest": object(obj{
			"signalIds": obj{"type": "array", "maxItems": 100, "items": obj{"type": "string", "minLength": 1, "maxLength": 512},
				"description": "Signal ids (from the creation answer) or record ids of queued messages."},
		}, "signalIds"),
		"CancelMessagesResponse": object(obj{"cancelledSignalIds": array(obj{"type": "string"})}, "cancelledSignalIds"),
	}
}
