package admin

// schedulePaths documents /schedules: create, list, get, patch, delete, pause, resume and
// run.
func schedulePaths() obj {
	p := func(path string) string { return Prefix + path }
	one := []obj{idParam()}
	sched := jsonResponse("The schedule.", ref("Schedule"))
	return obj{
		p("/schedules"): obj{
			"get": operation("admin", "listSchedules", "List schedules", "Every schedule, from config.yaml (origin config) and this API (origin api), by id.",
				nil, nil, obj{"200": jsonResponse("The schedules.", ref("ScheduleList"))}, "401", "403"),
			"post": operation("admin", "createSchedule", "Create a schedule",
				"Each fire sends one signal to the thread, as POST …/signals does, with id schedule:{id}:{fireTime}. The first fire is the cron's next after now.",
				nil, jsonBody("The schedule.", ref("ScheduleSpec"), true),
				obj{"201": jsonResponse("The schedule, created.", ref("Schedule"))}, "400", "401", "403", "409"),
		},
		p("/schedules/{id}"): obj{
			"get": operation("admin", "getSchedule", "Get a schedule", "", one, nil, obj{"200": sched}, "400", "401", "403", "404"),
			"patch": operation("admin", "patchSchedule", "Change a schedule",
				"A JSON merge patch over the schedule's fields (null removes an optional one); id cannot change. A new cron or timezone starts again from now. A schedule config.yaml defines is changed there (409).",
				one, jsonBody("The fields to change.", ref("ScheduleSpec"), true), obj{"200": sched}, "400", "401", "403", "404", "409"),
			"delete": operation("admin", "deleteSchedule", "Delete a schedule",
				"No replica fires it again. One config.yaml defines comes back at the next start: pause it, or remove it from the file.",
				one, nil, obj{"200": jsonResponse("The schedule as it was.", ref("Schedule"))}, "400", "401", "403", "404"),
		},
		p("/schedules/{id}/pause"): obj{"post": operation("admin", "pauseSchedule", "Pause a schedule",
			"No fires until resumed; the pause outlasts restarts.", one, nil, obj{"200": sched}, "400", "401", "403", "404")},
		p("/schedules/{id}/resume"): obj{"post": operation("admin", "resumeSchedule", "Resume a schedule",
			"Fires again from the cron's next fire after now; fires missed while paused are not sent.", one, nil, obj{"200": sched}, "400", "401", "403", "404")},
		p("/schedules/{id}/run"): obj{"post": operation("admin", "runSchedule", "Fire a schedule now",
			"Sends its signal now, paused or not, with id schedule:{id}:{now to the second}; the cron's next fire stays.",
			one, nil, obj{"200": jsonResponse("What the signal did, as POST …/signals answers.", ref("SignalResponse")),
				"502": errorResponse("The agent's target did not take the signal.")}, "400", "401", "403", "404", "409")},
	}
}

func scheduleSchemas() obj {
	spec := obj{
		"id":         str("Letters, digits, '.', '_' and '-' (at most 128)."),
		"agent":      str("The agent id."),
		"resourceId": str("The thread's resource id."),
		"threadId":   str("The thread id."),
		"cron":       str("Five fields (minute hour day-of-month month day-of-week), or six with seconds first."),
		"timezone":   str("An IANA zone the cron is read in (default UTC)."),
		"contents":   str("The signal's text."),
		"signalType": enum("Default notification.", "notification", "user", "reactive", "user-message", "system-reminder"),
		"tagName":    str("Default schedule."),
		"attributes": obj{"type": "object", "description": "The signal's attributes: strings, numbers or booleans."},
		"ifActive":   object(obj{"behavior": enum("Default deliver.", "deliver", "persist", "discard")}),
		"ifIdle":     object(obj{"behavior": enum("Default wake.", "wake", "persist", "discard"), "streamOptions": obj{"type": "object", "description": "Passed to a mastra target when the fire wakes the thread."}}),
		"catchUp":    enum("What a fire missed while no gateway ran does: none (default) skips it, last sends the latest once at start.", "none", "last"),
	}
	full := obj{}
	for k, v := range spec {
		full[k] = v
	}
	state := obj{
		"origin":     enum("Where it is defined.", "config", "api"),
		"status":     enum("", "active", "paused"),
		"nextFireAt": timestamp("The next fire (UTC)."),
		"lastFireAt": timestamp("The last fire sent."),
		"lastError":  str("Why the last fire was refused by the thread, if it was."),
		"createdAt":  timestamp(""), "updatedAt": timestamp(""),
	}
	for k, v := range state {
		full[k] = v
	}
	return obj{
		"ScheduleSpec": object(spec),
		"Schedule":     object(full, "id", "agent", "resourceId", "threadId", "cron", "timezone", "contents", "signalType", "tagName", "catchUp", "origin", "status", "createdAt", "updatedAt"),
		"ScheduleList": object(obj{"schedules": array(ref("Schedule"))}, "schedules"),
	}
}
