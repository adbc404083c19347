// Package webapitest is a Slack Web API for tests: slack-go's slacktest server with
// chat.postMessage, chat.update, chat.postEphemeral, usergroups.users.list,
// conversations.replies and conversations.history answered in Slack's documented shapes
// and recorded, so a test sees exactly what was sent. Posted messages are kept per
// channel with their metadata, which the conversations methods hand back only when
// asked with include_all_metadata, as Slack does.
package webapitest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack/slacktest"
)

// Call is one recorded Web API call: its method and form values, and the ts a
// posted message got.
type Call struct {
	Method string
	Form   url.Values
	TS     string
}

// Server is a running fake Web API.
type Server struct {
	srv *slacktest.Server
	// Calls receives every recorded call (buffered); tests wait on it.
	Calls chan Call

	mu     sync.Mutex
	seq    int
	clock  bool  // ts from the wall clock (TimestampsFromClock)
	last   int64 // the last such ts, in microseconds
	groups map[string][]string
	fail   map[string]string // method → Slack error code
	limit  map[string]int    // method → Retry-After seconds of its next answer (429)
	posted map[string][]Message
}

// Message is a posted message as the fake keeps it.
type Message struct {
	TS       string
	ThreadTS string
	Text     string
	Metadata json.RawMessage // as posted (event_type, event_payload); nil without
	BotID    string          // the posting app's bot; BotID for chat.postMessage
}

// Seed adds a message to channel as if someone else had posted it (another app, a person).
func (s *Server) Seed(channel string, m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.posted[channel] = append(s.posted[channel], m)
}

// New starts a server stopped at cleanup.
func New(t testing.TB) *Server {
	s := &Server{Calls: make(chan Call, 100), groups: map[string][]string{}, fail: map[string]string{},
		limit: map[string]int{}, posted: map[string][]Message{}}
	s.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", s.handler("chat.postMessage"))
		c.Handle("/chat.update", s.handler("chat.update"))
		c.Handle("/chat.postEphemeral", s.handler("chat.postEphemeral"))
		c.Handle("/usergroups.users.list", s.handler("usergroups.users.list"))
		c.Handle("/conversations.replies", s.handler("conversations.replies"))
		c.Handle("/conversations.history", s.handler("conversations.history"))
		c.Handle("/auth.test", authTest)
	})
	s.srv.Start()
	t.Cleanup(s.srv.Stop)
	return s
}

// BotID is the bot id auth.test names and chat.postMessage stamps on posted messages.
const BotID = "B0BOT"

// authTest answers as slacktest does (its team and user), plus the bot id a bot token's
// auth.test carries (https://api.slack.com/methods/auth.test). It is not recorded in Calls.
func authTest(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "url": "https://localhost.localdomain/",
		"team": "SlackTest Team", "user": "Egon Spengler", "team_id": "T024BE7LD", "user_id": "W012A3CDE", "bot_id": BotID})
}

// APIURL is the base URL for slack.OptionAPIURL (with its trailing slash).
func (s *Server) APIURL() string { return s.srv.GetAPIURL() }

// TimestampsFromClock gives posted messages wall-clock ts (strictly increasing), as
// Slack does, instead of 1700000000.<n>: a client's `oldest` bound then filters as on
// Slack.
func (s *Server) TimestampsFromClock() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = true
}

// SetGroup sets a user group's members.
func (s *Server) SetGroup(id string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[id] = members
}

// Fail makes method answer {"ok":false,"error":code}; "" answers normally again.
func (s *Server) Fail(method, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[method] = code
}

// RateLimit makes the next call of method answer HTTP 429 with Retry-After: seconds.
func (s *Server) RateLimit(method string, seconds int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit[method] = seconds
}

// Posted returns the messages posted to channel, oldest first.
func (s *Server) Posted(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.posted[channel])
}

func (s *Server) handler(method string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.seq++
		ts := fmt.Sprintf("1700000000.%06d", s.seq)
		if s.clock {
			s.last = max(s.last+1, time.Now().UnixMicro())
			ts = fmt.Sprintf("%d.%06d", s.last/1e6, s.last%1e6)
		}
		code := s.fail[method]
		members := s.groups[r.Form.Get("usergroup")]
		wait, limited := s.limit[method]
		delete(s.limit, method)
		if method == "chat.postMessage" && code == "" && !limited {
			ch := r.Form.Get("channel")
			m := Message{TS: ts, ThreadTS: r.Form.Get("thread_ts"), Text: r.Form.Get("text"), BotID: BotID}
			if md := r.Form.Get("metadata"); md != "" {
				m.Metadata = json.RawMessage(md)
			}
			s.posted[ch] = append(s.posted[ch], m)
		}
		s.mu.Unlock()
		select {
		case s.Calls <- Call{Method: method, Form: r.Form, TS: ts}:
		default:
		}
		if limited {
			// https://api.slack.com/apis/rate-limits: HTTP 429 with Retry-After in seconds.
			w.Header().Set("Retry-After", strconv.Itoa(wait))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var resp map[string]any
		switch {
		case code != "":
			resp = map[string]any{"ok": false, "error": code}
		case method == "chat.postMessage":
			// https://api.slack.com/methods/chat.postMessage#examples
			msg := map[string]any{"type": "message", "text": r.Form.Get("text"), "ts": ts, "bot_id": BotID}
			if md := r.Form.Get("metadata"); md != "" {
				msg["metadata"] = json.RawMessage(md)
			}
			if tts := r.Form.Get("thread_ts"); tts != "" {
				msg["thread_ts"] = tts
			}
			resp = map[string]any{"ok": true, "channel": r.Form.Get("channel"), "ts": ts, "message": msg}
		case method == "conversations.replies", method == "conversations.history":
			resp = s.conversation(method, r.Form)
		case method == "chat.update":
			resp = map[string]any{"ok": true, "channel": r.Form.Get("channel"), "ts": r.Form.Get("ts"), "text": r.Form.Get("text")}
		case method == "chat.postEphemeral":
			resp = map[string]any{"ok": true, "message_ts": ts}
		case method == "usergroups.users.list":
			if members == nil {
				resp = map[string]any{"ok": false, "error": "no_such_subteam"}
			} else {
				resp = map[string]any{"ok": true, "users": members}
			}
		}
		_ = json.NewEncoder(w).Encode(resp)
	}
}

// pageSize is the fake's default page (Slack's default limit is 100 for history and
// replies; smaller here so tests cross pages).
const pageSize = 10

// conversation answers conversations.replies (the thread of ts, parent first, oldest
// first) and conversations.history (top-level messages, newest first), in pages of
// limit with a cursor, from oldest on. A thread parent nobody posted here is answered as
// a person's message, as if it came from an event.
func (s *Server) conversation(method string, f url.Values) map[string]any {
	ch, thread := f.Get("channel"), f.Get("ts")
	if ch == "" || (method == "conversations.replies" && thread == "") {
		return map[string]any{"ok": false, "error": "invalid_arguments"}
	}
	oldest, _ := strconv.ParseFloat(f.Get("oldest"), 64)
	s.mu.Lock()
	all := slices.Clone(s.posted[ch])
	s.mu.Unlock()
	var msgs []Message
	if method == "conversations.replies" {
		if !slices.ContainsFunc(all, func(m Message) bool { return m.TS == thread }) {
			msgs = append(msgs, Message{TS: thread, ThreadTS: thread, Text: "a question"})
		}
		for _, m := range all {
			if m.TS == thread || m.ThreadTS == thread {
				msgs = append(msgs, m)
			}
		}
	} else {
		for _, m := range all {
			if m.ThreadTS == "" || m.ThreadTS == m.TS {
				msgs = append(msgs, m)
			}
		}
		slices.Reverse(msgs)
	}
	msgs = slices.DeleteFunc(msgs, func(m Message) bool {
		v, _ := strconv.ParseFloat(m.TS, 64)
		return v < oldest
	})
	limit, _ := strconv.Atoi(f.Get("limit"))
	if limit <= 0 || limit > pageSize {
		limit = pageSize
	}
	start, _ := strconv.Atoi(f.Get("cursor"))
	start = min(max(start, 0), len(msgs))
	end := min(start+limit, len(msgs))
	page := make([]any, 0, end-start)
	for _, m := range msgs[start:end] {
		out := map[string]any{"type": "message", "ts": m.TS, "text": m.Text}
		if m.BotID != "" {
			out["bot_id"] = m.BotID
		}
		if m.ThreadTS != "" {
			out["thread_ts"] = m.ThreadTS
		}
		if m.Metadata != nil && f.Get("include_all_metadata") == "1" {
			out["metadata"] = m.Metadata
		}
		page = append(page, out)
	}
	resp := map[string]any{"ok": true, "messages": page, "has_more": end < len(msgs)}
	if end < len(msgs) {
		resp["response_metadata"] = map[string]any{"next_cursor": strconv.Itoa(end)}
	}
	return resp
}

// Click describes one button click.
type Click struct {
	ActionID, Value    string
	UserID, UserName   string
	Channel, MessageTS string
	ThreadTS           string
}

// BlockActions is the form body Slack posts for a click on a message button: a
// `payload` field holding a block_actions interaction, in the shape of Slack's
// reference (https://api.slack.com/reference/interaction-payloads/block-actions).
func BlockActions(c Click) []byte {
	message := map[string]any{"type": "message", "subtype": "bot_message", "text": "approval", "ts": c.MessageTS,
		"bot_id": BotID, "blocks": []any{}}
	if c.ThreadTS != "" {
		message["thread_ts"] = c.ThreadTS
	}
	payload := map[string]any{
		"type":       "block_actions",
		"team":       map[string]any{"id": "T9TK3CUKW", "domain": "example"},
		"user":       map[string]any{"id": c.UserID, "username": c.UserName, "name": c.UserName, "team_id": "T9TK3CUKW"},
		"api_app_id": "AABA1ABCD",
		"token":      "9s8d9as89d8as9d8as989",
		"container": map[string]any{"type": "message", "message_ts": c.MessageTS, "channel_id": c.Channel,
			"is_ephemeral": false},
		"trigger_id":   "12321423423.333649436676.d8c1bb837935619ccad0f624c448ffb3",
		"channel":      map[string]any{"id": c.Channel, "name": "approvals"},
		"message":      message,
		"response_url": "https://hooks.slack.com/actions/AABA1ABCD/1232321423432/D09sSasdasdAS9091209",
		"actions": []any{map[string]any{"action_id": c.ActionID, "block_id": "signalgate_approval",
			"text": map[string]any{"type": "plain_text", "text": "Approve", "emoji": true}, "value": c.Value,
			"type": "button", "action_ts": "1548426417.840180"}},
	}
	raw, _ := json.Marshal(payload)
	return []byte(url.Values{"payload": {string(raw)}}.Encode())
}

// Sign is Slack's v0 request signature of body at unix time ts.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}
