package connectorstest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/server"
)

// WrongSecret signs the "wrong secret" case. It is a valid secret for every
// scheme (16 bytes or more), just not the one the connector holds.
const WrongSecret = "not-the-connector-secret-0123456789"

// BodyLimit is the server body limit of the over-the-limit case.
const BodyLimit = 64 << 10

// Delivery is one request for an adapter to build as its provider sends it.
type Delivery struct {
	Connector string // the path's connector name
	ID        string // the delivery id, where it travels in a header
	Body      []byte
	At        time.Time // when it was signed
	Secret    string    // "" signs with the connector's own secret
}

// Unreadable is a body that verifies but the connector cannot read.
type Unreadable struct {
	Name string
	Body []byte
	// Reason, when set, is part of the error the event is stored with.
	Reason string
	// Prepare, when set, adjusts the signed request (an event type, a content type).
	Prepare func(*http.Request)
	// Check, when set, asserts more about the stored event.
	Check func(t *testing.T, ev inbox.Event)
}

// HTTPConnector adapts one HTTP connector to Exercise.
type HTTPConnector struct {
	// Name is the connector New configures.
	Name string
	// Start is where the clock the connector reads starts.
	Start time.Time
	// New mounts the connector, configured as Name, on a server with this body limit
	// (0: the server's default), storing through ing and reading the time from now.
	New func(t *testing.T, limit server.ByteSize, ing connectors.Ingester, now func() time.Time) http.Handler
	// Body is a routable delivery from the provider's documented examples; id is its
	// delivery id where that travels in the body (Slack's event_id).
	Body func(t *testing.T, id string) []byte
	// Request builds d as the provider sends it, signed.
	Request func(t *testing.T, d Delivery) *http.Request
	// SignatureHeader carries the signature.
	SignatureHeader string
	// DeliveryIDHeader carries the delivery id the provider always sends; "" when it
	// travels in the body.
	DeliveryIDHeader string
	// DeliveryIDOf, when set, is the delivery id the connector gives a body whose
	// provider sends none (Alertmanager's: a digest of the body); the id sent otherwise.
	DeliveryIDOf func(body []byte) string
	// IDSigned says the delivery id is part of the signed content: without it the
	// request cannot be verified, so it is a 401 rather than a 400.
	IDSigned bool
	// TimestampHeader carries the signed timestamp; "" when the scheme signs none.
	TimestampHeader string
	// Tolerance is how far the signed timestamp may be from now, either way.
	Tolerance time.Duration
	// Unreadable lists the connector's own verified-but-unreadable bodies, run
	// after the ones every connector shares.
	Unreadable []Unreadable
	// ReadLimitHeaders must be on the 413 the connector answers when the limit trips
	// while it reads the body (Slack's X-Slack-No-Retry); a Content-Length over the
	// limit is refused by the server before the connector sees the request.
	ReadLimitHeaders map[string]string
}

// Clock is a settable clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock reading start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock on.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// exercise is one case's connector: a fresh handler, fake inbox and clock.
type exercise struct {
	t     *testing.T
	c     *HTTPConnector
	h     http.Handler
	ing   *Ingester
	clock *Clock
}

func (c *HTTPConnector) start(t *testing.T, limit server.ByteSize) *exercise {
	t.Helper()
	clock := NewClock(c.Start)
	ing := NewIngester()
	return &exercise{t: t, c: c, h: c.New(t, limit, ing, clock.Now), ing: ing, clock: clock}
}

// request is a delivery of body signed now with the connector's secret.
func (e *exercise) request(id string, body []byte) *http.Request {
	return e.c.Request(e.t, Delivery{Connector: e.c.Name, ID: id, Body: body, At: e.clock.Now()})
}

func (e *exercise) do(req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return rec
}

// rejected asserts an answer with no detail and nothing stored.
func (e *exercise) rejected(rec *httptest.ResponseRecorder, status int, message string) {
	e.t.Helper()
	require.Equal(e.t, status, rec.Code, rec.Body.String())
	switch {
	case status == http.StatusUnauthorized:
		assert.Equal(e.t, "missing or invalid credentials", errorMessage(e.t, rec), "no detail for a forger")
	case message != "":
		assert.Contains(e.t, errorMessage(e.t, rec), message)
	}
	assert.Empty(e.t, e.ing.Calls(), "nothing stored")
}

// Exercise runs the conformance cases every HTTP connector answers alike:
// verification, the delivery id, unknown connectors, unreadable bodies,
// redeliveries and the body limit. Cases a scheme has no part in are skipped.
func Exercise(t *testing.T, c HTTPConnector) {
	t.Run("accepted", func(t *testing.T) {
		e := c.start(t, 0)
		body := c.Body(t, "delivery-1")
		rec := e.do(e.request("delivery-1", body))
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		out := outcome(t, rec)
		assert.Equal(t, inbox.EventRouted, out.Status)
		assert.False(t, out.Duplicate)
		assert.Positive(t, out.Records)
		calls := e.ing.Calls()
		require.Len(t, calls, 1)
		assert.Equal(t, c.deliveryID("delivery-1", body), calls[0].Event.DeliveryID)
		for k := range calls[0].Event.Headers {
			assert.NotEqual(t, http.CanonicalHeaderKey(c.SignatureHeader), http.CanonicalHeaderKey(k), "the signature is not stored")
		}
	})
	t.Run("bad signature", func(t *testing.T) { c.badSignature(t) })
	t.Run("missing delivery id", func(t *testing.T) {
		if c.DeliveryIDHeader == "" {
			t.Skip("the delivery id travels in the body")
		}
		e := c.start(t, 0)
		req := e.request("delivery-1", c.Body(t, "delivery-1"))
		req.Header.Del(c.DeliveryIDHeader)
		if c.IDSigned {
			e.rejected(e.do(req), http.StatusUnauthorized, "")
			return
		}
		e.rejected(e.do(req), http.StatusBadRequest, "missing "+http.CanonicalHeaderKey(c.DeliveryIDHeader))
	})
	t.Run("unknown connector", func(t *testing.T) {
		e := c.start(t, 0)
		body := c.Body(t, "delivery-1")
		req := c.Request(t, Delivery{Connector: "nope", ID: "delivery-1", Body: body, At: e.clock.Now()})
		e.rejected(e.do(req), http.StatusNotFound, `"nope"`)
	})
	t.Run("verified but unreadable", func(t *testing.T) { c.unreadable(t) })
	t.Run("redelivery", func(t *testing.T) {
		e := c.start(t, 0)
		body := c.Body(t, "delivery-1")
		first := e.do(e.request("delivery-1", body))
		require.Equal(t, http.StatusOK, first.Code, first.Body.String())
		out := outcome(t, first)
		require.False(t, out.Duplicate)

		e.clock.Add(time.Minute) // a redelivery is signed afresh
		again := e.do(e.request("delivery-1", body))
		require.Equal(t, http.StatusOK, again.Code, again.Body.String())
		dup := outcome(t, again)
		assert.True(t, dup.Duplicate)
		assert.Equal(t, out.EventID, dup.EventID)
		calls := e.ing.Calls()
		require.Len(t, calls, 2)
		assert.True(t, calls[1].Duplicate, "the inbox saw the redelivery as a duplicate: nothing new")
		assert.Equal(t, c.deliveryID("delivery-1", body), calls[1].Event.DeliveryID)
	})
	t.Run("over the body limit", func(t *testing.T) { c.overLimit(t) })
	t.Run("stale timestamp", func(t *testing.T) {
		if c.TimestampHeader == "" {
			t.Skip("the scheme signs no timestamp")
		}
		c.staleTimestamp(t)
	})
}

// deliveryID is the id the connector gives a delivery of body sent as id.
func (c *HTTPConnector) deliveryID(id string, body []byte) string {
	if c.DeliveryIDOf != nil {
		return c.DeliveryIDOf(body)
	}
	return id
}

// tamper turns a validly signed request for body into one that must be refused.
type tamper struct {
	name    string
	prepare func(e *exercise, body []byte) *http.Request
}

func (c *HTTPConnector) badSignature(t *testing.T) {
	signed := func(change func(r *http.Request)) func(e *exercise, body []byte) *http.Request {
		return func(e *exercise, body []byte) *http.Request {
			req := e.request("delivery-1", body)
			change(req)
			return req
		}
	}
	cases := []tamper{
		{"wrong secret", func(e *exercise, body []byte) *http.Request {
			return c.Request(t, Delivery{Connector: c.Name, ID: "delivery-1", Body: body, At: e.clock.Now(), Secret: WrongSecret})
		}},
		{"missing signature", signed(func(r *http.Request) { r.Header.Del(c.SignatureHeader) })},
		{"garbage signature", signed(func(r *http.Request) { r.Header.Set(c.SignatureHeader, "garbage") })},
		{"body changed after signing", func(e *exercise, body []byte) *http.Request {
			req := e.request("delivery-1", body)
			changed := append(bytes.Clone(body), ' ')
			req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(changed)), int64(len(changed))
			return req
		}},
	}
	if c.TimestampHeader != "" {
		cases = append(cases,
			tamper{"missing timestamp", signed(func(r *http.Request) { r.Header.Del(c.TimestampHeader) })},
			tamper{"timestamp changed after signing", signed(func(r *http.Request) {
				ts, err := strconv.ParseInt(r.Header.Get(c.TimestampHeader), 10, 64)
				require.NoError(t, err)
				r.Header.Set(c.TimestampHeader, strconv.FormatInt(ts+1, 10))
			})})
	}
	if c.IDSigned {
		cases = append(cases, tamper{"delivery id changed after signing",
			signed(func(r *http.Request) { r.Header.Set(c.DeliveryIDHeader, "delivery-2") })})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := c.start(t, 0)
			req := tc.prepare(e, c.Body(t, "delivery-1"))
			e.rejected(e.do(req), http.StatusUnauthorized, "")
		})
	}
}

// unreadable: once the signature holds, a body the connector cannot read is stored
// as invalid (for replay) and answered 202; a 400 would only be retried.
func (c *HTTPConnector) unreadable(t *testing.T) {
	valid := c.Body(t, "delivery-1")
	shared := []Unreadable{
		{Name: "truncated JSON", Body: valid[:len(valid)/2]},
		{Name: "not JSON", Body: []byte("hello=world")},
		{Name: "JSON array", Body: []byte(`[{"type":"event"}]`)},
		{Name: "JSON null", Body: []byte(`null`)},
		{Name: "JSON string", Body: []byte(`"hello"`)},
		{Name: "empty body", Body: []byte{}},
	}
	for _, u := range append(shared, c.Unreadable...) {
		t.Run(u.Name, func(t *testing.T) {
			e := c.start(t, 0)
			req := e.request("delivery-1", u.Body)
			if u.Prepare != nil {
				u.Prepare(req)
			}
			rec := e.do(req)
			require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
			out := outcome(t, rec)
			assert.Equal(t, inbox.EventInvalid, out.Status)
			assert.NotEmpty(t, out.EventID)
			assert.Zero(t, out.Records)
			calls := e.ing.Calls()
			require.Len(t, calls, 1, "stored for replay")
			ev := calls[0].Event
			assert.Equal(t, inbox.EventInvalid, ev.Status)
			assert.NotEmpty(t, ev.Error)
			if u.Reason != "" {
				assert.Contains(t, ev.Error, u.Reason)
			}
			assert.Empty(t, calls[0].Notifications)
			if c.DeliveryIDHeader != "" {
				assert.Equal(t, "delivery-1", ev.DeliveryID)
			}
			if u.Check != nil {
				u.Check(t, ev)
			}
		})
	}
}

func (c *HTTPConnector) overLimit(t *testing.T) {
	big := c.Body(t, "delivery-1")
	// Padding after the JSON value keeps the body signed as sent and over the limit.
	big = append(bytes.Clone(big), bytes.Repeat([]byte(" "), BodyLimit)...)
	for _, tc := range []struct {
		name    string
		limit   server.ByteSize
		prepare func(*http.Request)
		read    bool // the limit trips while the connector reads
	}{
		{"content-length", BodyLimit, func(*http.Request) {}, false},
		{"chunked", BodyLimit, func(r *http.Request) {
			r.ContentLength = -1 // no length up front: the limit trips while reading
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(big)))
		}, true},
		{"bounded reader", 0, func(r *http.Request) {
			r.Body = http.MaxBytesReader(nil, io.NopCloser(bytes.NewReader(big)), 1024)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := c.start(t, tc.limit)
			req := e.request("delivery-1", big)
			tc.prepare(req)
			rec := e.do(req)
			e.rejected(rec, http.StatusRequestEntityTooLarge, "")
			if tc.read {
				for k, v := range c.ReadLimitHeaders {
					assert.Equal(t, v, rec.Header().Get(k), k)
				}
			}
		})
	}
}

func (c *HTTPConnector) staleTimestamp(t *testing.T) {
	beyond := c.Tolerance + time.Second
	for _, tc := range []struct {
		name string
		at   time.Duration // signing time relative to the clock
		wait time.Duration // how far the clock moves before the request is served
		ok   bool
	}{
		{"signed too long ago", -beyond, 0, false},
		{"received too long after signing", 0, beyond, false},
		{"signed in the future", beyond, 0, false},
		{"received just within the window", 0, c.Tolerance - time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := c.start(t, 0)
			req := c.Request(t, Delivery{Connector: c.Name, ID: "delivery-1", Body: c.Body(t, "delivery-1"), At: e.clock.Now().Add(tc.at)})
			e.clock.Add(tc.wait)
			rec := e.do(req)
			if tc.ok {
				require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
				require.Len(t, e.ing.Calls(), 1)
				return
			}
			e.rejected(rec, http.StatusUnauthorized, "")
		})
	}
}

func outcome(t *testing.T, rec *httptest.ResponseRecorder) connectors.Outcome {
	t.Helper()
	var out connectors.Outcome
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out), rec.Body.String())
	return out
}

func errorMessage(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), rec.Body.String())
	return e.Error.Message
}
