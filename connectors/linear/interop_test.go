package linear

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"

	"github.com/signalgate/signalgate/connectors"
)

// sdkCase is one call of interop/senders/senders.mjs (installed by .ci/senders.sh): the
// pinned @linear/sdk verifying a delivery with LinearWebhookClient, or handing out its
// generated GraphQL documents.
type sdkCase struct {
	Lib     string            `json:"lib"`
	Key     string            `json:"key,omitempty"`
	Body    string            `json:"body,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Now     int64             `json:"now,omitempty"` // Unix ms: the SDK's clock
	Names   []string          `json:"names,omitempty"`
}

type sdkResult struct {
	OK        bool              `json:"ok"`
	Error     string            `json:"error"`
	Documents map[string]string `json:"documents"`
}

// linearSDK runs cases through @linear/sdk; skipped unless the harness is installed.
func linearSDK(t *testing.T, cases []sdkCase) []sdkResult {
	t.Helper()
	dir := os.Getenv("SIGNALGATE_SENDERS_INTEROP")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "interop", "senders")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@linear", "sdk")); err != nil {
		t.Skip("senders interop harness not installed (run .ci/senders.sh)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found")
	}
	in, err := json.Marshal(cases)
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), node, "senders.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	require.NoError(t, err, "senders output: %s", raw)
	var out []sdkResult
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	require.Len(t, out, len(cases))
	return out
}

// TestSDKVerifiesTheGatewaysDeliveries: every sample the connector's sender signs
// (what `gateway deliver` posts) is verified by @linear/sdk's LinearWebhookClient and
// accepted by the gateway; a changed body, another secret's signature and a delivery
// dated past the minute are refused by both. (LinearWebhookClient verifies only: the
// SDK has no signing function, so the gateway signs and the SDK judges.)
func TestSDKVerifiesTheGatewaysDeliveries(t *testing.T) {
	h := newHarness(t, nil)
	snd, err := NewSender(Config{Name: "acme", WebhookSecret: testSecret}, connectorsOptions())
	require.NoError(t, err)
	type delivery struct {
		name string
		body []byte
		hdr  http.Header
		ok   bool
	}
	var ds []delivery
	for _, info := range snd.Samples() {
		s, err := snd.Sample(info.Name, h.now)
		require.NoError(t, err)
		hdr, err := snd.Sign(s, "http://gateway/webhooks/linear/acme", h.now)
		require.NoError(t, err)
		ds = append(ds, delivery{info.Name, s.Body, hdr, true})
	}
	s, err := snd.Sample("", h.now)
	require.NoError(t, err)
	hdr, _ := snd.Sign(s, "", h.now)
	ds = append(ds, delivery{"changed body", bytes.Replace(s.Body, []byte("saved-card"), []byte("stored-card"), 1), hdr, false})
	other, _ := NewSender(Config{Name: "acme", WebhookSecret: testSecret + "x"}, connectorsOptions())
	otherHdr, _ := other.Sign(s, "", h.now)
	ds = append(ds, delivery{"another secret", s.Body, otherHdr, false})
	stale, err := snd.Sample("", h.now.Add(-Tolerance-time.Second))
	require.NoError(t, err)
	staleHdr, _ := snd.Sign(stale, "", h.now)
	ds = append(ds, delivery{"expired", stale.Body, staleHdr, false})

	cases := make([]sdkCase, len(ds))
	for i, d := range ds {
		hs := map[string]string{}
		for k := range d.hdr {
			hs[strings.ToLower(k)] = d.hdr.Get(k)
		}
		cases[i] = sdkCase{Lib: "linear", Key: testSecret, Body: string(d.body), Headers: hs, Now: h.now.UnixMilli()}
	}
	verdicts := linearSDK(t, cases)
	for i, d := range ds {
		assert.Equal(t, d.ok, verdicts[i].OK, "%s: the SDK says %s", d.name, verdicts[i].Error)
		req := httptest.NewRequest(http.MethodPost, "/webhooks/linear/acme", bytes.NewReader(d.body))
		req.Header = d.hdr.Clone()
		rec := httptest.NewRecorder()
		h.e.ServeHTTP(rec, req)
		if d.ok {
			assert.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, "%s: %s", d.name, rec.Body.String())
		} else {
			assert.Equal(t, http.StatusUnauthorized, rec.Code, d.name)
		}
	}
}

// TestSDKDocumentsValidateAgainstSchema: the pinned @linear/sdk's own documents for the
// operations the connector sends (creating a comment and an agent activity, listing
// comments and activities, the viewer and a user) validate against the schema the
// stand-in judges with: it is the API the SDK speaks.
func TestSDKDocumentsValidateAgainstSchema(t *testing.T) {
	names := []string{"CreateCommentDocument", "CreateAgentActivityDocument", "CommentsDocument", "AgentActivitiesDocument", "ViewerDocument", "UserDocument"}
	out := linearSDK(t, []sdkCase{{Lib: "linear-documents", Names: names}})
	schema, err := linearSchema()
	require.NoError(t, err)
	for _, n := range names {
		doc := out[0].Documents[n]
		require.NotEmpty(t, doc, "@linear/sdk has no %s", n)
		_, gerr := gqlparser.LoadQuery(schema, doc)
		assert.Nil(t, gerr, "%s: %v", n, gerr)
	}
	_, gerr := gqlparser.LoadQuery(schema, `query { viewer { nope } }`)
	assert.NotNil(t, gerr, "the schema refuses what Linear does not have")
}

func connectorsOptions() connectors.SenderOptions { return connectors.SenderOptions{} }
