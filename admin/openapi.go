package admin

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/reply"
)

// Kinds are what the OpenAPI document says of the integration kinds (the kinds table).
// Without them its source enums list none and replyTo has no place fields.
type Kinds struct {
	// Sources are every kind's sources, in the gateway's order (a sample's source).
	Sources []string
	// Places are the kinds that answer (replyTo's sources and fields).
	Places reply.Places
	// Watchable are the sources a watch may name.
	Watchable []string
	// Targets are the target kinds (an attempt's target, a target status's kind).
	Targets []string
	// Runtimes are the target kinds that may ask people (an approval's origin).
	Runtimes []string
}

// OpenAPI returns the OpenAPI 3.1 document of everything the gateway serves over HTTP:
// the admin API, the agent API, the ingest endpoints and operations. It is built in Go
// (no generated file to keep in sync) and checked against the registered routes by the
// tests of package gateway. The schemas' source enums and replyTo's fields come from k.
func OpenAPI(k Kinds) ([]byte, error) {
	replies, err := replySchemas(k.Places)
	if err != nil {
		return nil, err
	}
	doc := obj{
		"openapi": "3.1.0",
		"info": obj{
			"title":   "signalgate",
			"version": "1",
			"description": "A self-hosted webhook gateway for AI agents: connectors in, a durable notification " +
				"inbox, and signals out to agent threads. Every error body is " +
				`{"error": {"code": "...", "message": "..."}}.`,
		},
		"tags": []obj{
			{"name": "admin", "description": "Operators: events, notifications, threads, deliveries, connectors, explain. Bearer admin token; reads need scope read, changes need write."},
			{"name": "agent", "description": "Agents: a thread's stream, runs (presence), signals and inbox. Bearer token of the agent. An unknown field in a request body is a 400 naming the field."},
			{"name": "ingest", "description": "Webhooks from GitHub, Slack and generic senders, verified by signature."},
			{"name": "operations", "description": "Health, readiness, metrics and this document."},
			{"name": "runtime", "description": "Agent runtimes reporting their runs and tasks (a target kind's own endpoint: a LangGraph run's webhook, an A2A task's push notification), verified by what the gateway put in the URL or registered with the task."},
		},
		"paths": paths(),
		"components": obj{
			"securitySchemes": obj{
				"adminToken": obj{"type": "http", "scheme": "bearer", "description": "An admin token of config admin.tokens."},
				"agentToken": obj{"type": "http", "scheme": "bearer", "description": "The token of the agent named in the path (config agents[].token)."},
			},
			"responses": obj{
				"BadRequest":   errorResponse("Invalid input; the message names the parameter or field."),
				"Unauthorized": errorResponse("Missing or unknown bearer token."),
				"Forbidden":    errorResponse("The token lacks the scope, or names another agent."),
				"NotFound":     errorResponse("Unknown id or path."),
				"Conflict":     errorResponse("The record's status does not allow the action."),
			},
			"schemas": withSchemas(withSchemas(withSchemas(withSchemas(schemas(k), approvalSchemas(k.Runtimes)), messageSchemas()), replies), withSchemas(withSchemas(watchSchemas(k.Watchable), scheduleSchemas()), silenceSchemas())),
		},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode openapi document: %w", err)
	}
	return b, nil
}

// obj is a JSON object of the document.
type obj = map[string]any

// withSchemas adds more to the schemas.
func withSchemas(all obj, more obj) obj {
	for k, v := range more {
		all[k] = v
	}
	return all
}

func ref(schema string) obj { return obj{"$ref": "#/components/schemas/" + schema} }

func str(desc string) obj { return obj{"type": "string", "description": desc} }

func enum(desc string, values ...string) obj {
	return obj{"type": "string", "description": desc, "enum": values}
}

// sourceEnum is a source field: one of sources when they are known.
func sourceEnum(desc string, sources []string) obj { return enumOf(desc, sources) }

// enumOf is a string field, one of values when they are known.
func enumOf(desc string, values []string) obj {
	if len(values) == 0 {
		return str(desc)
	}
	return enum(desc, values...)
}

func integer(desc string) obj { return obj{"type": "integer", "description": desc} }

func boolean(desc string) obj { return obj{"type": "boolean", "description": desc} }

func timestamp(desc string) obj {
	return obj{"type": "string", "format": "date-time", "description": desc}
}

func array(items obj) obj { return obj{"type": "array", "items": items} }

// object is a schema with properties; required names those always present.
func object(props obj, required ...string) obj {
	o := obj{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func nullable(o obj) obj { return obj{"oneOf": []obj{o, {"type": "null"}}} }

func errorResponse(desc string) obj {
	return obj{"description": desc, "content": obj{"application/json": obj{"schema": ref("Error")}}}
}

func plainResponse(desc string) obj {
	return obj{"description": desc, "content": obj{"text/plain": obj{"schema": obj{"type": "string"}}}}
}

func jsonResponse(desc string, schema obj) obj {
	return obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
}

func jsonBody(desc string, schema obj, required bool) obj {
	return obj{"description": desc, "required": required, "content": obj{"application/json": obj{"schema": schema}}}
}

func query(name, desc string, schema obj) obj {
	return obj{"name": name, "in": "query", "description": desc, "schema": schema}
}

func pathParam(name, desc string) obj {
	return obj{"name": name, "in": "path", "required": true, "description": desc, "schema": obj{"type": "string"}}
}

func header(name, desc string, required bool) obj {
	return obj{"name": name, "in": "header", "required": required, "description": desc, "schema": obj{"type": "string"}}
}

// operation builds one operation; responses maps status codes to responses, and the
// shared error responses are added by name ("400", "401", …).
func operation(tag, id, summary, desc string, params []obj, body obj, responses obj, errs ...string) obj {
	op := obj{"tags": []string{tag}, "operationId": id, "summary": summary, "responses": responses}
	if desc != "" {
		op["description"] = desc
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if body != nil {
		op["requestBody"] = body
	}
	names := map[string]string{"400": "BadRequest", "401": "Unauthorized", "403": "Forbidden", "404": "NotFound", "409": "Conflict"}
	for _, code := range errs {
		responses[code] = obj{"$ref": "#/components/responses/" + names[code]}
	}
	switch tag {
	case "admin":
		op["security"] = []obj{{"adminToken": []string{}}}
	case "agent":
		op["security"] = []obj{{"agentToken": []string{}}}
	}
	return op
}

// consolePrefix is where the console's pages are (console.Prefix).
const consolePrefix = "/console"

// MissingFromOpenAPI lists the routes ("METHOD /path") that the document does not
// describe; tests run it over everything registered on echo. Routes echo registers for
// 404s (group middleware) are not endpoints and are skipped.
func MissingFromOpenAPI(routes []*echo.Route) ([]string, error) {
	raw, err := OpenAPI(Kinds{})
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decode openapi document: %w", err)
	}
	var missing []string
	for _, r := range routes {
		if r.Method == echo.RouteNotFound || r.Path == Prefix+pprofPath ||
			r.Path == consolePrefix || strings.HasPrefix(r.Path, consolePrefix+"/") {
			// Go's own profiling endpoint (opt-in) is described by Go's docs, not ours;
			// the console is HTML pages for a browser, not an API.
			continue
		}
		path := openAPIPath(r.Path)
		if _, ok := doc.Paths[path][strings.ToLower(r.Method)]; !ok {
			missing = append(missing, r.Method+" "+path)
		}
	}
	sort.Strings(missing)
	return missing, nil
}

// openAPIPath turns echo's /a/:id into OpenAPI's /a/{id}.
func openAPIPath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		if strings.HasPrefix(s, ":") {
			parts[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
