package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

const (
	testBotToken = "xoxb-test-token"
	testAppToken = "xapp-1-A0KRD7HC3-test"
)

// fakeSlack is a local Slack: the Web API methods the connector calls
// (users.info, conversations.info, auth.test, apps.connections.open) and a
// Socket Mode WebSocket speaking the documented envelope protocol
// (https://api.slack.com/apis/socket-mode): hello, events_api envelopes with an
// envelope_id, and {"envelope_id": …} acknowledgements back.
type fakeSlack struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	calls    map[string]int // "users.info U1" → count
	users    map[string]map[string]any
	channels map[string]map[string]any
	// hang, when set, makes Web API lookups wait until the caller gives up.
	hang bool

	envelopes chan []byte // sent to the connected socket, in order
	acks      chan string // envelope ids acknowledged by the client
	done      chan struct{}
	closeOnce sync.Once
}

func newFakeSlack(t testing.TB) *fakeSlack {
	f := &fakeSlack{
		t:     t,
		calls: map[string]int{},
		users: map[string]map[string]any{
			testUser: {"id": testUser, "team_id": testTeam, "name": "alice.liddell", "real_name": "Alice Liddell",
				"is_bot": false, "profile": map[string]any{"display_name": "alice", "real_name": "Alice Liddell"}},
			testBot: {"id": testBot, "team_id": testTeam, "name": "signalbot", "real_name": "Signal Bot",
				"is_bot": true, "profile": map[string]any{"display_name": "", "real_name": "Signal Bot"}},
			"U0BOB": {"id": "U0BOB", "team_id": testTeam, "name": "bob", "real_name": "",
				"is_bot": false, "profile": map[string]any{"display_name": "", "real_name": ""}},
		},
		channels: map[string]map[string]any{
			"C0001": {"id": "C0001", "name": "general", "is_channel": true, "is_private": false, "is_im": false, "is_mpim": false},
			"C0002": {"id": "C0002", "name": "ops", "is_channel": true, "is_private": false, "is_im": false, "is_mpim": false},
			"G0002": {"id": "G0002", "name": "secret-plans", "is_channel": true, "is_group": false, "is_private": true, "is_im": false, "is_mpim": false},
		},
		envelopes: make(chan []byte, 16),
		acks:      make(chan string, 16),
		done:      make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/users.info", f.usersInfo)
	mux.HandleFunc("/conversations.info", f.conversationsInfo)
	mux.HandleFunc("/auth.test", f.authTest)
	mux.HandleFunc("/apps.connections.open", f.connectionsOpen)
	mux.HandleFunc("/link", f.socket)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// Close ends open sockets and the server; safe to call twice.
func (f *fakeSlack) Close() {
	f.closeOnce.Do(func() {
		close(f.done)
		f.srv.Close()
	})
}

// APIURL is the Web API base URL to configure as api_url.
func (f *fakeSlack) APIURL() string { return f.srv.URL + "/" }

func (f *fakeSlack) count(key string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[key]
}

func (f *fakeSlack) setHang(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hang = v
}

// lookup records the call, checks the bot token and honours hang.
func (f *fakeSlack) lookup(w http.ResponseWriter, r *http.Request, method, param string) (string, bool) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return "", false
	}
	id := r.FormValue(param)
	f.mu.Lock()
	f.calls[strings.TrimSpace(method+" "+id)]++
	hang := f.hang
	f.mu.Unlock()
	if hang {
		select {
		case <-r.Context().Done():
		case <-f.done:
		}
		return "", false
	}
	if r.FormValue("token") != testBotToken && r.Header.Get("Authorization") != "Bearer "+testBotToken {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return "", false
	}
	return id, true
}

func (f *fakeSlack) usersInfo(w http.ResponseWriter, r *http.Request) {
	id, ok := f.lookup(w, r, "users.info", "user")
	if !ok {
		return
	}
	f.mu.Lock()
	u, found := f.users[id]
	f.mu.Unlock()
	if !found {
		writeJSON(w, map[string]any{"ok": false, "error": "user_not_found"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "user": u})
}

func (f *fakeSlack) conversationsInfo(w http.ResponseWriter, r *http.Request) {
	id, ok := f.lookup(w, r, "conversations.info", "channel")
	if !ok {
		return
	}
	f.mu.Lock()
	ch, found := f.channels[id]
	f.mu.Unlock()
	if !found {
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "channel": ch})
}

func (f *fakeSlack) authTest(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.lookup(w, r, "auth.test", "-"); !ok {
		return
	}
	writeJSON(w, map[string]any{"ok": true, "url": "https://acme.slack.com/", "team": "Acme",
		"user": "signalbot", "team_id": testTeam, "user_id": testBot, "bot_id": "B0BOT", "is_enterprise_install": false})
}

func (f *fakeSlack) connectionsOpen(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls["apps.connections.open"]++
	f.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+testAppToken {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "url": "ws://" + r.Host + "/link?ticket=1234"})
}

// socket serves one Socket Mode connection: hello, then envelopes as the test
// queues them, while reading acknowledgements.
func (f *fakeSlack) socket(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	conn, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	hello := map[string]any{"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "applink-test", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": "A0KRD7HC3"}}
	if conn.WriteJSON(hello) != nil {
		return
	}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			var ack struct {
				EnvelopeID string `json:"envelope_id"`
			}
			if err := conn.ReadJSON(&ack); err != nil {
				return
			}
			select {
			case f.acks <- ack.EnvelopeID:
			case <-f.done:
				return
			}
		}
	}()
	ping := time.NewTicker(50 * time.Millisecond)
	defer ping.Stop()
	for {
		select {
		case <-f.done:
			return
		case <-readerDone:
			return
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second)) != nil {
				return
			}
		case env := <-f.envelopes:
			if conn.WriteMessage(websocket.TextMessage, env) != nil {
				return
			}
		}
	}
}

// sendEnvelope queues an events_api envelope carrying payload (an event_callback body).
func (f *fakeSlack) sendEnvelope(envelopeID string, payload []byte, retry int) {
	b, err := json.Marshal(map[string]any{
		"envelope_id":              envelopeID,
		"payload":                  json.RawMessage(payload),
		"type":                     "events_api",
		"accepts_response_payload": false,
		"retry_attempt":            retry,
		"retry_reason":             map[bool]string{true: "timeout", false: ""}[retry > 0],
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.envelopes <- b
}

// nextAck waits for the next acknowledgement.
func (f *fakeSlack) nextAck(timeout time.Duration) (string, error) {
	select {
	case id := <-f.acks:
		return id, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("no acknowledgement within %s", timeout)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
