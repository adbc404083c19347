package github

import (
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeHooks is GitHub's record of webhook deliveries (the App's hook and repository
// and organisation hooks): every request is checked against GitHub's description,
// including its query parameters, and answered in the described shape. Listing is
// newest first in pages whose next cursor travels in the Link header, as GitHub does.
type fakeHooks struct {
	t   testing.TB
	api *openAPI
	srv *httptest.Server

	auth   string // the Authorization a repository or organisation hook request carries
	appID  int64  // the App whose JWT reads /app/hook
	appKey *rsa.PublicKey

	mu       sync.Mutex
	nextID   int64
	hooks    map[string][]*fakeDelivery // "app", "owner/repo:ID", "org:ID": oldest first
	requests []string
	// listing, when set, is called (unlocked) before a list is answered.
	listing func()
	fail    []canned
	// skip is how many requests are answered before fail applies.
	skip int
	// rate are the X-RateLimit headers every answer carries (nil: none).
	rate map[string]string
}

// failAfter answers c after n more requests have been answered.
func (f *fakeHooks) failAfter(n int, c ...canned) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.skip, f.fail = n, append(f.fail, c...)
}

type fakeDelivery struct {
	id      int64
	guid    string
	at      time.Time
	event   string
	action  string
	status  int // the answer the gateway gave GitHub (0: could not connect)
	payload json.RawMessage
}

func newFakeHooks(t testing.TB) *fakeHooks {
	t.Helper()
	f := &fakeHooks{t: t, api: loadOpenAPI(t), auth: "Bearer ghp_test-token", nextID: 9_000_000_000, hooks: map[string][]*fakeDelivery{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeHooks) URL() string { return f.srv.URL + "/" }

// record adds a delivery GitHub made (or tried) to hook at at.
func (f *fakeHooks) record(hook, guid, event string, payload []byte, at time.Time, status int) *fakeDelivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	var p map[string]any
	_ = json.Unmarshal(payload, &p)
	action, _ := p["action"].(string)
	d := &fakeDelivery{id: f.nextID, guid: guid, at: at.UTC(), event: event, action: action, status: status, payload: payload}
	f.hooks[hook] = append(f.hooks[hook], d)
	return d
}

func (f *fakeHooks) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeHooks) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	op, params, problems := f.api.check(r.Method, r.URL.Path, body)
	if op != nil {
		problems = append(problems, f.checkQuery(op, r)...)
	}
	if len(problems) > 0 {
		f.mu.Unlock()
		f.t.Errorf("%s %s does not match GitHub's description: %s", r.Method, r.URL.RequestURI(), strings.Join(problems, "; "))
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Invalid request.\n\n" + strings.Join(problems, "\n")})
		return
	}
	for k, v := range f.rate {
		w.Header().Set(k, v)
	}
	id := op["operationId"].(string)
	var hook string
	switch id {
	case "apps/list-webhook-deliveries", "apps/get-webhook-delivery":
		jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		g := &fakeGitHub{appID: f.appID, appKey: f.appKey}
		if !ok || f.appKey == nil || g.verifyJWT(jwt) != nil {
			f.mu.Unlock()
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "A JSON web token could not be decoded"})
			return
		}
		hook = "app"
	case "repos/list-webhook-deliveries", "repos/get-webhook-delivery":
		hook = params["owner"] + "/" + params["repo"] + ":" + params["hook_id"]
	case "orgs/list-webhook-deliveries", "orgs/get-webhook-delivery":
		hook = params["org"] + ":" + params["hook_id"]
	default:
		f.mu.Unlock()
		f.t.Errorf("unexpected operation %s", id)
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	if hook != "app" && r.Header.Get("Authorization") != f.auth {
		f.mu.Unlock()
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	if len(f.fail) > 0 && f.skip > 0 {
		f.skip--
	} else if len(f.fail) > 0 {
		c := f.fail[0]
		f.fail = f.fail[1:]
		f.mu.Unlock()
		for k, v := range c.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(c.status)
		_, _ = io.WriteString(w, c.body)
		return
	}
	list := f.hooks[hook]
	if strings.HasSuffix(id, "/get-webhook-delivery") {
		defer f.mu.Unlock()
		want, _ := strconv.ParseInt(params["delivery_id"], 10, 64)
		for _, d := range list {
			if d.id == want {
				writeJSON(w, http.StatusOK, f.full(op, d))
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	listing := f.listing
	f.mu.Unlock()
	if listing != nil {
		listing()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.page(w, r, op, f.hooks[hook])
}

// checkQuery refuses query parameters the operation does not describe.
func (f *fakeHooks) checkQuery(op map[string]any, r *http.Request) []string {
	var problems []string
	for name := range r.URL.Query() {
		known := false
		for _, p := range op["parameters"].([]any) {
			pm := f.api.resolve(p)
			if pm["in"] == "query" && pm["name"] == name {
				known = true
			}
		}
		if !known {
			problems = append(problems, fmt.Sprintf("query parameter %q is not described", name))
		}
	}
	if per := r.URL.Query().Get("per_page"); per != "" {
		if n, err := strconv.Atoi(per); err != nil || n < 1 || n > 100 {
			problems = append(problems, fmt.Sprintf("per_page=%q is not 1..100", per))
		}
	}
	return problems
}

// page answers deliveries newest first from the cursor (a delivery id) on.
func (f *fakeHooks) page(w http.ResponseWriter, r *http.Request, op map[string]any, list []*fakeDelivery) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	from := int64(1 << 62)
	if c := q.Get("cursor"); c != "" {
		n, err := strconv.ParseInt(strings.TrimPrefix(c, "v1_"), 10, 64)
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"message": "Invalid cursor"})
			return
		}
		from = n
	}
	var out []any
	var next int64
	for i := len(list) - 1; i >= 0; i-- {
		d := list[i]
		if d.id > from {
			continue
		}
		if len(out) == per {
			next = d.id
			break
		}
		out = append(out, f.item(op, d))
	}
	if next != 0 {
		q.Set("cursor", "v1_"+strconv.FormatInt(next, 10))
		w.Header().Set("Link", fmt.Sprintf(`<%s%s?%s>; rel="next"`, f.srv.URL, r.URL.Path, q.Encode()))
	}
	if out == nil {
		out = []any{}
	}
	writeJSON(w, http.StatusOK, out)
}

// item is d as the operation describes it: the documented example with d's fields.
func (f *fakeHooks) item(op map[string]any, d *fakeDelivery) map[string]any {
	ex, ok := f.api.example(op, "200").(map[string]any) // one delivery
	if !ok {
		ex = f.api.example(op, "200").([]any)[0].(map[string]any) // a list's
	}
	out := map[string]any{}
	for k, v := range ex {
		out[k] = v
	}
	out["id"], out["guid"], out["event"] = d.id, d.guid, d.event
	out["delivered_at"] = d.at.Format(time.RFC3339)
	out["status_code"] = d.status
	out["status"] = "OK"
	if d.status == 0 || d.status >= 300 {
		out["status"] = "failed to connect"
	}
	out["action"] = nil
	if d.action != "" {
		out["action"] = d.action
	}
	return out
}

// full is one delivery with the request GitHub made: its headers and payload.
func (f *fakeHooks) full(op map[string]any, d *fakeDelivery) map[string]any {
	out := f.item(op, d)
	out["request"] = map[string]any{
		"headers": map[string]any{
			"Accept": "*/*", "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/044aadd",
			"X-GitHub-Delivery": d.guid, "X-GitHub-Event": d.event, "X-GitHub-Hook-ID": "1",
			"X-Hub-Signature-256": "sha256=" + strings.Repeat("0", 64),
		},
		"payload": d.payload,
	}
	out["response"] = map[string]any{"headers": map[string]any{}, "payload": nil}
	return out
}
