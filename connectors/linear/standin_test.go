package linear

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator"
)

// linearSchema is Linear's published SDL (testdata/README.md), parsed once.
var linearSchema = sync.OnceValues(func() (*ast.Schema, error) {
	f, err := os.Open("testdata/schema.graphql.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	sdl, err := io.ReadAll(z)
	if err != nil {
		return nil, err
	}
	s, gerr := gqlparser.LoadSchema(&ast.Source{Name: "linear.graphql", Input: string(sdl)})
	if gerr != nil {
		return nil, gerr
	}
	return s, nil
})

// validate refuses an operation that does not validate against Linear's schema, or
// whose variables do not fit its variable definitions.
func validate(t *testing.T, query, opName string, vars map[string]any) error {
	t.Helper()
	schema, err := linearSchema()
	require.NoError(t, err)
	doc, gerr := gqlparser.LoadQuery(schema, query)
	if gerr != nil {
		return gerr
	}
	op := doc.Operations.ForName(opName)
	if op == nil {
		return &json.UnsupportedValueError{Str: "no operation named " + opName}
	}
	if _, gerr := validator.VariableValues(schema, op, vars); gerr != nil {
		return gerr
	}
	return nil
}

// call is one operation the stand-in accepted.
type call struct {
	Op   string
	Vars map[string]any
	Auth string
}

// standIn is Linear's GraphQL API for tests: it accepts only operations valid against
// the published schema (400 with GraphQL errors otherwise), records them, and answers
// from its state: the viewer, users, comments and agent activities created.
type standIn struct {
	t   *testing.T
	srv *httptest.Server

	mu         sync.Mutex
	calls      []call
	viewerID   string
	org        string
	users      map[string]member
	comments   map[string]map[string]any // by id: the input, and "userId"
	activities map[string]map[string]any
	// failAfterWrite answers the next n creations 502 after making them.
	failAfterWrite int
	// down answers every call 503.
	down bool
}

const (
	testViewer = "5c1d9e3a-2b7f-4f60-8d0e-0a6b4c3e2f11" // the samples' appUserId
	testOrg    = "78b2a2dc-6f4f-4423-9d34-24b5bd10634a"
	testAda    = "2e6eea91-1111-0000-9486-acea0603064d"
)

func newStandIn(t *testing.T) *standIn {
	s := &standIn{t: t, viewerID: testViewer, org: testOrg, users: map[string]member{testAda: {Active: true}},
		comments: map[string]map[string]any{}, activities: map[string]map[string]any{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *standIn) gqlErrors(w http.ResponseWriter, status int, msg, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []any{map[string]any{"message": msg, "extensions": map[string]any{"code": code}}}})
}

func (s *standIn) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query         string         `json:"query"`
		OperationName string         `json:"operationName"`
		Variables     map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		s.gqlErrors(w, http.StatusBadRequest, "not JSON", "BAD_REQUEST")
		return
	}
	if err := validate(s.t, req.Query, req.OperationName, req.Variables); err != nil {
		s.t.Errorf("operation %s does not validate against Linear's schema: %v", req.OperationName, err)
		s.gqlErrors(w, http.StatusBadRequest, err.Error(), "GRAPHQL_VALIDATION_FAILED")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call{Op: req.OperationName, Vars: req.Variables, Auth: r.Header.Get("Authorization")})
	if s.down {
		s.gqlErrors(w, http.StatusServiceUnavailable, "unavailable", "INTERNAL_SERVER_ERROR")
		return
	}
	var data any
	in, _ := req.Variables["input"].(map[string]any)
	id, _ := req.Variables["id"].(string)
	switch req.OperationName {
	case "SignalgateViewer":
		data = map[string]any{"viewer": map[string]any{"id": s.viewerID, "app": true, "organization": map[string]any{"id": s.org}}}
	case "SignalgateUser":
		m, ok := s.users[id]
		if !ok {
			s.gqlErrors(w, http.StatusOK, "Entity not found: User", "INPUT_ERROR")
			return
		}
		data = map[string]any{"user": map[string]any{"id": id, "guest": m.Guest, "active": m.Active, "app": m.App}}
	case "SignalgateCommentCreate":
		cid, _ := in["id"].(string)
		if _, dup := s.comments[cid]; dup {
			s.gqlErrors(w, http.StatusBadRequest, "id already exists", "INPUT_ERROR")
			return
		}
		in["userId"] = s.viewerID
		s.comments[cid] = in
		data = map[string]any{"commentCreate": map[string]any{"success": true, "comment": map[string]any{"id": cid, "url": "https://linear.app/acme/comment/" + cid}}}
	case "SignalgateAgentActivityCreate":
		aid, _ := in["id"].(string)
		if _, dup := s.activities[aid]; dup {
			s.gqlErrors(w, http.StatusBadRequest, "id already exists", "INPUT_ERROR")
			return
		}
		in["userId"] = s.viewerID
		s.activities[aid] = in
		data = map[string]any{"agentActivityCreate": map[string]any{"success": true, "agentActivity": map[string]any{"id": aid}}}
	case "SignalgateFindComment", "SignalgateFindAgentActivity":
		store, key := s.comments, "comments"
		if req.OperationName == "SignalgateFindAgentActivity" {
			store, key = s.activities, "agentActivities"
		}
		nodes := []any{}
		if c, ok := store[id]; ok {
			nodes = append(nodes, map[string]any{"id": id, "url": "https://linear.app/acme/comment/" + id, "user": map[string]any{"id": c["userId"]}})
		}
		data = map[string]any{key: map[string]any{"nodes": nodes}}
	default:
		s.gqlErrors(w, http.StatusBadRequest, "the stand-in does not answer "+req.OperationName, "BAD_REQUEST")
		return
	}
	if (req.OperationName == "SignalgateCommentCreate" || req.OperationName == "SignalgateAgentActivityCreate") && s.failAfterWrite > 0 {
		s.failAfterWrite--
		s.gqlErrors(w, http.StatusBadGateway, "bad gateway", "INTERNAL_SERVER_ERROR")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"data": data})
}

func (s *standIn) ops() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.calls {
		out = append(out, c.Op)
	}
	return out
}

// TestOperationsValidateAgainstLinearSchema: every operation the connector sends is
// valid against Linear's published schema, and the stand-in refuses one that is not.
func TestOperationsValidateAgainstLinearSchema(t *testing.T) {
	ops := map[string]string{
		"SignalgateViewer": viewerQuery, "SignalgateUser": userQuery, "SignalgateCommentCreate": commentCreate,
		"SignalgateAgentActivityCreate": activityCreate, "SignalgateFindComment": findComment, "SignalgateFindAgentActivity": findActivity,
	}
	vars := map[string]map[string]any{
		"SignalgateUser":                {"id": "u"},
		"SignalgateCommentCreate":       {"input": map[string]any{"id": answerID("c", "r"), "issueId": "i", "parentId": "p", "body": "hi"}},
		"SignalgateAgentActivityCreate": {"input": map[string]any{"id": answerID("c", "r"), "agentSessionId": "s", "content": map[string]any{"type": "thought", "body": "hm"}}},
		"SignalgateFindComment":         {"id": "x"},
		"SignalgateFindAgentActivity":   {"id": "x"},
	}
	for name, q := range ops {
		require.NoError(t, validate(t, q, name, vars[name]), name)
	}
	require.Error(t, validate(t, `mutation M($input: CommentCreateInput!) { commentCreate(input: $input) { success comment { nope } } }`, "M",
		map[string]any{"input": map[string]any{"body": "x"}}), "a field Linear does not have")
	require.Error(t, validate(t, commentCreate, "SignalgateCommentCreate", map[string]any{"input": map[string]any{"parentCommentId": "x"}}),
		"an input field Linear does not have")
}
