package admin

// silencePaths documents the admin API's silences.
func silencePaths() obj {
	p := func(path string) string { return Prefix + path }
	return obj{
		p("/silences"): obj{
			"get": operation("admin", "listSilences", "List silences, newest first", "At most 1000.",
				[]obj{query("state", "pending (startsAt ahead), active or expired; all when left out.", enum("", "pending", "active", "expired"))},
				nil, obj{"200": jsonResponse("The silences.", ref("SilenceList"))}, "400", "401", "403"),
			"post": operation("admin", "createSilence", "Make a silence",
				"While it is active, records its matchers (and when) match are held: pending, decision reason silenced by <id>, neither delivered nor summarised; "+
					"urgent ones pass unless includeUrgent. When it ends, what it held is decided again through the policy as of then, each thread's accumulation as one summary. "+
					"endsAt − startsAt is at most silences.max_duration (default 168h); a bad field is a 400 naming it.",
				nil, jsonBody("The silence.", ref("SilenceInput"), true),
				obj{"201": jsonResponse("The silence, made.", ref("Silence"))}, "400", "401", "403"),
		},
		p("/silences/{id}"): obj{
			"get": operation("admin", "getSilence", "Get a silence", "", []obj{idParam()}, nil,
				obj{"200": jsonResponse("The silence.", ref("Silence"))}, "400", "401", "403", "404"),
			"delete": operation("admin", "expireSilence", "Expire a silence early",
				"Ends it now, as Alertmanager's expire; what it held is released by the next dispatch pass. An expired silence is answered as it is (200).",
				[]obj{idParam()}, nil, obj{"200": jsonResponse("The silence, expired.", ref("Silence"))}, "400", "401", "403", "404"),
		},
	}
}

func silenceSchemas() obj {
	matcher := object(obj{
		"name":    str("agent, resource, thread, source, kind, route, priority, or an attribute's name."),
		"value":   obj{"type": "string", "maxLength": 1024, "description": "The value, or with isRegex a regular expression matched against the whole value."},
		"isRegex": boolean("value is a regular expression (RE2, anchored at both ends)."),
		"isEqual": boolean("false: the matcher matches what does not equal (or match) value. Default true."),
	}, "name", "value")
	input := obj{
		"matchers":      obj{"type": "array", "minItems": 1, "maxItems": 32, "items": ref("SilenceMatcher"), "description": "All must match; at least one must not match an empty value."},
		"when":          str("An expression as in policy rules' when, over the record and its event's payload (presence reads idle)."),
		"startsAt":      timestamp("Default and at the earliest: now."),
		"endsAt":        timestamp("At most silences.max_duration after startsAt."),
		"createdBy":     obj{"type": "string", "maxLength": 256, "description": "Who made it."},
		"comment":       obj{"type": "string", "maxLength": 4096, "description": "Why."},
		"includeUrgent": boolean("Urgent records are held too."),
	}
	full := obj{
		"id":        str("A time-ordered UUID."),
		"status":    object(obj{"state": enum("", "pending", "active", "expired")}, "state"),
		"updatedAt": timestamp("When it was made."),
		"expiredBy": str("The admin token that expired it early."),
	}
	for k, v := range input {
		full[k] = v
	}
	return obj{
		"SilenceMatcher": matcher,
		"SilenceInput":   object(input, "matchers", "endsAt", "createdBy", "comment"),
		"Silence":        object(full, "id", "matchers", "startsAt", "endsAt", "createdBy", "comment", "status", "updatedAt"),
		"SilenceList":    object(obj{"silences": array(ref("Silence"))}, "silences"),
	}
}
