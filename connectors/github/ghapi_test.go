package github

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// openAPIFile is GitHub's official REST description (@octokit/openapi, pinned in
// scripts/fetch-github-openapi.sh).
var openAPIFile = filepath.Join("testdata", "openapi", "api.github.com.json")

// loadOpenAPIOnce parses the 13 MB description once per test binary.
var loadOpenAPIOnce = sync.OnceValues(func() (*openAPI, error) {
	if _, err := os.Stat(openAPIFile); os.IsNotExist(err) {
		// The test setup fetches it like the webhook examples (make fixtures does too).
		out, err := exec.Command("bash", filepath.Join("..", "..", "scripts", "fetch-github-openapi.sh")).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("fetch %s: %v: %s", openAPIFile, err, out)
		}
	}
	raw, err := os.ReadFile(openAPIFile)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("decode %s: %w", openAPIFile, err)
	}
	a := &openAPI{doc: doc}
	for tmpl, item := range doc["paths"].(map[string]any) {
		a.paths = append(a.paths, apiPath{tmpl: tmpl, segs: strings.Split(strings.Trim(tmpl, "/"), "/"), item: item.(map[string]any)})
	}
	return a, nil
})

func loadOpenAPI(t testing.TB) *openAPI {
	t.Helper()
	a, err := loadOpenAPIOnce()
	if err != nil {
		t.Skipf("GitHub's OpenAPI description is not available (needs npm): %v", err)
	}
	return a
}

type openAPI struct {
	doc   map[string]any
	paths []apiPath
}

type apiPath struct {
	tmpl string
	segs []string
	item map[string]any
}

// resolve follows $ref pointers within the document.
func (a *openAPI) resolve(v any) map[string]any {
	m, _ := v.(map[string]any)
	for m != nil {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		var cur any = a.doc
		for _, k := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = cur.(map[string]any)[k]
		}
		m, _ = cur.(map[string]any)
	}
	return m
}

// operation finds the described operation of a request: the path template that
// matches with the most literal segments, and the path parameters.
func (a *openAPI) operation(method, path string) (map[string]any, map[string]string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best map[string]any
	var bestParams map[string]string
	bestLiterals := -1
	for _, p := range a.paths {
		if len(p.segs) != len(segs) {
			continue
		}
		params, literals := map[string]string{}, 0
		ok := true
		for i, s := range p.segs {
			switch {
			case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
				params[s[1:len(s)-1]] = segs[i]
			case s == segs[i]:
				literals++
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		op, has := p.item[strings.ToLower(method)].(map[string]any)
		if ok && has && literals > bestLiterals {
			best, bestParams, bestLiterals = op, params, literals
		}
	}
	return best, bestParams, best != nil
}

// check validates a request against its operation: the path and method exist, path
// parameters have their types, and the body has the required fields with their types.
func (a *openAPI) check(method, path string, body []byte) (op map[string]any, params map[string]string, problems []string) {
	op, params, ok := a.operation(method, path)
	if !ok {
		return nil, nil, []string{fmt.Sprintf("%s %s is not in GitHub's description", method, path)}
	}
	for _, p := range op["parameters"].([]any) {
		pm := a.resolve(p)
		if pm["in"] != "path" {
			continue
		}
		name := pm["name"].(string)
		if typ, _ := a.resolve(pm["schema"])["type"].(string); typ == "integer" {
			if _, err := strconv.ParseInt(params[name], 10, 64); err != nil {
				problems = append(problems, fmt.Sprintf("path parameter %s=%q is not an integer", name, params[name]))
			}
		}
	}
	rb := a.resolve(op["requestBody"])
	if rb == nil {
		return op, params, problems
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if rb["required"] == true {
			problems = append(problems, "request body required")
		}
		return op, params, problems
	}
	schema := a.resolve(rb["content"].(map[string]any)["application/json"].(map[string]any)["schema"])
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return op, params, append(problems, "body is not JSON: "+err.Error())
	}
	if v == nil && rb["required"] != true {
		return op, params, problems // ghinstallation sends null for "no options"
	}
	return op, params, append(problems, a.checkValue("body", schema, v)...)
}

func (a *openAPI) checkValue(where string, schema map[string]any, v any) []string {
	typ, _ := schema["type"].(string)
	if typ != "" && !jsonType(typ, v) {
		return []string{fmt.Sprintf("%s: want %s, got %T", where, typ, v)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var problems []string
	for _, r := range asList(schema["required"]) {
		if _, has := obj[r.(string)]; !has {
			problems = append(problems, fmt.Sprintf("%s.%s: required", where, r))
		}
	}
	props, _ := schema["properties"].(map[string]any)
	for k, fv := range obj {
		if ps := a.resolve(props[k]); ps != nil {
			problems = append(problems, a.checkValue(where+"."+k, ps, fv)...)
		}
	}
	return problems
}

func asList(v any) []any { l, _ := v.([]any); return l }

func jsonType(typ string, v any) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		n, ok := v.(json.Number)
		_, err := strconv.ParseInt(string(n), 10, 64)
		return ok && err == nil
	case "number":
		_, ok := v.(json.Number)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

// example is a fresh copy of the operation's first documented example answer.
func (a *openAPI) example(op map[string]any, status string) any {
	resp := a.resolve(op["responses"].(map[string]any)[status])
	content := resp["content"].(map[string]any)["application/json"].(map[string]any)
	for _, ex := range content["examples"].(map[string]any) {
		raw, _ := json.Marshal(a.resolve(ex)["value"])
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		_ = dec.Decode(&v)
		return v
	}
	return nil
}

// documented reports whether the description lists status among op's answers.
func documented(op map[string]any, status int) bool {
	_, ok := op["responses"].(map[string]any)[strconv.Itoa(status)]
	return ok
}

// canned is a failure the fake answers instead of the next request.
type canned struct {
	status int
	header map[string]string
	body   string
}

// fakeGitHub is a stateful GitHub for replies: every request is checked against the
// description, and answers are its documented examples with the stored comment's id,
// body, author and times filled in.
type fakeGitHub struct {
	t   testing.TB
	api *openAPI
	srv *httptest.Server

	login string // the author of what is posted
	auth  string // the Authorization header every API request must carry

	// App installations: the access token request must carry a JWT signed by appKey.
	appID   int64
	appKey  *rsa.PublicKey
	appSlug string // what GET /app names the App

	mu       sync.Mutex
	nextID   int64
	issues   map[string][]map[string]any // "owner/repo#n": issue comments, oldest first
	reviews  map[string][]map[string]any // "owner/repo#n": review comments, oldest first
	fail     []canned
	requests []string // "METHOD path?query", in order
}

func newFakeGitHub(t testing.TB) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{t: t, api: loadOpenAPI(t), login: "octocat", auth: "Bearer ghp_test-token",
		nextID: 1000, issues: map[string][]map[string]any{}, reviews: map[string][]map[string]any{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGitHub) URL() string { return f.srv.URL + "/" }

// failNext queues answers for the next requests.
func (f *fakeGitHub) failNext(c ...canned) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = append(f.fail, c...)
}

func (f *fakeGitHub) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeGitHub) issueComments(key string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.issues[key])
}

func (f *fakeGitHub) reviewComments(key string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reviews[key])
}

// addIssueComment seeds a comment by login.
func (f *fakeGitHub) addIssueComment(key, login, body string, at time.Time) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	op, _, _ := f.api.operation(http.MethodPost, "/repos/o/r/issues/1/comments")
	c := f.comment(f.api.example(op, "201"), login, body, at)
	f.issues[key] = append(f.issues[key], c)
	return f.nextID
}

// addReviewComment seeds a top-level review comment by login.
func (f *fakeGitHub) addReviewComment(key, login, body string, at time.Time) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	op, _, _ := f.api.operation(http.MethodPost, "/repos/o/r/pulls/1/comments")
	c := f.comment(f.api.example(op, "201"), login, body, at)
	delete(c, "in_reply_to_id")
	f.reviews[key] = append(f.reviews[key], c)
	return f.nextID
}

// comment fills a documented example with a new id and the given content.
func (f *fakeGitHub) comment(example any, login, body string, at time.Time) map[string]any {
	c := example.(map[string]any)
	f.nextID++
	c["id"] = json.Number(strconv.FormatInt(f.nextID, 10))
	c["body"] = body
	c["created_at"], c["updated_at"] = at.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339)
	c["user"].(map[string]any)["login"] = login
	return c
}

func (f *fakeGitHub) serve(w http.ResponseWriter, r *http.Request) {

	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	op, params, problems := f.api.check(r.Method, r.URL.Path, body)
	if len(problems) > 0 {
		f.t.Errorf("%s %s does not match GitHub's description: %s", r.Method, r.URL.Path, strings.Join(problems, "; "))
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Invalid request.\n\n" + strings.Join(problems, "\n")})
		return
	}
	id := op["operationId"].(string)
	if id == "apps/create-installation-access-token" {
		f.installationToken(w, r, op)
		return
	}
	if id == "apps/get-authenticated" {
		// Only the App's JWT reads the App, never an installation token.
		jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || f.appKey == nil || f.verifyJWT(jwt) != nil {
			writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "A JSON web token could not be decoded"})
			return
		}
		app := f.api.example(op, "200").(map[string]any)
		app["slug"] = f.appSlug
		writeJSON(w, http.StatusOK, app)
		return
	}
	if got := r.Header.Get("Authorization"); got != f.auth {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials"})
		return
	}
	if len(f.fail) > 0 {
		c := f.fail[0]
		f.fail = f.fail[1:]
		if c.status < 500 && c.status != http.StatusTooManyRequests && c.status != http.StatusForbidden && !documented(op, c.status) {
			f.t.Errorf("%s does not document a %d answer", id, c.status)
		}
		for k, v := range c.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(c.status)
		_, _ = io.WriteString(w, c.body)
		return
	}
	key := params["owner"] + "/" + params["repo"] + "#"
	var in map[string]any
	_ = json.Unmarshal(body, &in)
	switch id {
	case "users/get-authenticated":
		u := f.api.example(op, "200").(map[string]any)
		u["login"] = f.login
		writeJSON(w, http.StatusOK, u)
	case "issues/create-comment":
		key += params["issue_number"]
		text, _ := in["body"].(string)
		if utf8.RuneCountInString(text) > MaxCommentChars {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
				"errors": []any{map[string]any{"resource": "IssueComment", "code": "custom", "field": "body",
					"message": "body is too long (maximum is 65536 characters)"}}})
			return
		}
		c := f.comment(f.api.example(op, "201"), f.login, text, time.Now())
		c["html_url"] = fmt.Sprintf("https://github.com/%s/%s/issues/%s#issuecomment-%s", params["owner"], params["repo"], params["issue_number"], c["id"])
		f.issues[key] = append(f.issues[key], c)
		writeJSON(w, http.StatusCreated, c)
	case "issues/list-comments":
		f.page(w, r, since(f.issues[key+params["issue_number"]], r))
	case "pulls/create-reply-for-review-comment":
		key += params["pull_number"]
		var root map[string]any
		for _, c := range f.reviews[key] {
			if c["id"].(json.Number).String() == params["comment_id"] {
				root = c
			}
		}
		if root == nil || root["in_reply_to_id"] != nil {
			writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
			return
		}
		text, _ := in["body"].(string)
		c := f.comment(f.api.example(op, "201"), f.login, text, time.Now())
		c["in_reply_to_id"] = root["id"]
		c["html_url"] = fmt.Sprintf("https://github.com/%s/%s/pull/%s#discussion_r%s", params["owner"], params["repo"], params["pull_number"], c["id"])
		f.reviews[key] = append(f.reviews[key], c)
		writeJSON(w, http.StatusCreated, c)
	case "pulls/list-review-comments":
		list := since(f.reviews[key+params["pull_number"]], r)
		if r.URL.Query().Get("sort") == "created" && r.URL.Query().Get("direction") == "desc" {
			slices.Reverse(list)
		}
		f.page(w, r, list)
	default:
		f.t.Errorf("unexpected operation %s", id)
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
	}
}

// since keeps the comments updated at or after the since parameter, as GitHub does.
func since(cs []map[string]any, r *http.Request) []map[string]any {
	s := r.URL.Query().Get("since")
	if s == "" {
		return slices.Clone(cs)
	}
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil
	}
	var out []map[string]any
	for _, c := range cs {
		if u, _ := time.Parse(time.RFC3339, c["updated_at"].(string)); !u.Before(at) {
			out = append(out, c)
		}
	}
	return out
}

// page answers one page with GitHub's Link header (per_page default 30, at most 100).
func (f *fakeGitHub) page(w http.ResponseWriter, r *http.Request, list []map[string]any) {
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 1)
	last := max((len(list)+per-1)/per, 1)
	link := func(p int, rel string) string {
		q.Set("page", strconv.Itoa(p))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, f.srv.URL, r.URL.Path, q.Encode(), rel)
	}
	var links []string
	if page > 1 {
		links = append(links, link(page-1, "prev"), link(1, "first"))
	}
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	from, to := min((page-1)*per, len(list)), min(page*per, len(list))
	writeJSON(w, http.StatusOK, list[from:to])
}

// installationToken checks the App's JWT (RS256, signed by the App's key, issued by
// its id) and answers the documented token, fresh for an hour.
func (f *fakeGitHub) installationToken(w http.ResponseWriter, r *http.Request, op map[string]any) {
	jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || f.appKey == nil || f.verifyJWT(jwt) != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "A JSON web token could not be decoded"})
		return
	}
	tok := f.api.example(op, "201").(map[string]any)
	tok["expires_at"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	f.auth = "token " + tok["token"].(string)
	writeJSON(w, http.StatusCreated, tok)
}

func (f *fakeGitHub) verifyJWT(tok string) error {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not a JWT")
	}
	var hdr struct{ Alg string }
	var claims struct {
		Iss string
		Exp int64
	}
	for i, dst := range []any{&hdr, &claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(raw, dst) != nil {
			return fmt.Errorf("part %d undecodable", i)
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || hdr.Alg != "RS256" || claims.Iss != strconv.FormatInt(f.appID, 10) {
		return fmt.Errorf("alg %q iss %q", hdr.Alg, claims.Iss)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	return rsa.VerifyPKCS1v15(f.appKey, crypto.SHA256, sum[:], sig)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// The validator refuses what GitHub's description calls invalid, so a passing test
// means a request GitHub would take.
func TestOpenAPIValidatorRefusesUndescribedRequests(t *testing.T) {
	a := loadOpenAPI(t)
	for _, tc := range []struct {
		method, path, body, says string
	}{
		// go-github's CreateCommentInReplyTo: the description requires commit_id and path.
		{"POST", "/repos/o/r/pulls/1/comments", `{"body":"x","in_reply_to":5}`, "body.commit_id: required"},
		{"POST", "/repos/o/r/issues/seven/comments", `{"body":"x"}`, "issue_number=\"seven\" is not an integer"},
		{"POST", "/repos/o/r/issues/7/comment", `{"body":"x"}`, "is not in GitHub's description"},
		{"PUT", "/repos/o/r/issues/7/comments", `{"body":"x"}`, "is not in GitHub's description"},
		{"POST", "/repos/o/r/issues/7/comments", `{"body":5}`, "body.body: want string"},
		{"POST", "/repos/o/r/issues/7/comments", `{}`, "body.body: required"},
		{"POST", "/repos/o/r/issues/7/comments", ``, "request body required"},
	} {
		_, _, problems := a.check(tc.method, tc.path, []byte(tc.body))
		require.NotEmpty(t, problems, tc.path)
		require.Contains(t, strings.Join(problems, "; "), tc.says)
	}
	_, params, problems := a.check("POST", "/repos/o/r/pulls/1/comments/5/replies", []byte(`{"body":"x"}`))
	require.Empty(t, problems)
	require.Equal(t, map[string]string{"owner": "o", "repo": "r", "pull_number": "1", "comment_id": "5"}, params)
}
