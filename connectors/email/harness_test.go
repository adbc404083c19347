package email

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
	"github.com/emersion/go-imap/v2/imapserver"
	"github.com/emersion/go-imap/v2/imapserver/imapmemserver"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/service"
	"github.com/signalgate/signalgate/store"
	"github.com/signalgate/signalgate/store/storetest"
)

const (
	testUser     = "gw"
	testPassword = "s3cret-imap-pw"
	// waitLimit only bounds a broken test; nothing waits on it when things work.
	waitLimit = 20 * time.Second
)

var testNow = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// memIMAP is an in-memory IMAP server on a loopback port that can go away and come
// back on the same address with the same mail.
type memIMAP struct {
	t    *testing.T
	mem  *imapmemserver.Server
	user *imapmemserver.User
	addr string
	tls  *tls.Config // STARTTLS when set
	// implicit serves TLS from the first byte.
	implicit bool

	mu  sync.Mutex
	srv *imapserver.Server
	// kick is closed (and replaced) after each delivery: idling sessions poll then.
	kick chan struct{}
}

// kicked returns the channel the next delivery closes.
func (s *memIMAP) kicked() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kick
}

// notify wakes idling sessions after mail was added.
func (s *memIMAP) notify() {
	s.mu.Lock()
	close(s.kick)
	s.kick = make(chan struct{})
	s.mu.Unlock()
}

// idleSession replaces imapmemserver's IDLE, which misses mail appended between
// its "+ idling" and the moment it starts listening: it polls on every delivery.
type idleSession struct {
	imapserver.SessionIMAP4rev2
	srv *memIMAP
}

func (s idleSession) Idle(w *imapserver.UpdateWriter, stop <-chan struct{}) error {
	for {
		kick := s.srv.kicked() // taken before Poll, so no delivery slips between them
		if err := s.Poll(w, true); err != nil {
			return err
		}
		select {
		case <-stop:
			return nil
		case <-kick:
		}
	}
}

func newMemIMAP(t *testing.T) *memIMAP {
	return newMemIMAPWith(t, nil, false)
}

func newMemIMAPWith(t *testing.T, tlsCfg *tls.Config, implicit bool) *memIMAP {
	t.Helper()
	s := &memIMAP{t: t, mem: imapmemserver.New(), user: imapmemserver.NewUser(testUser, testPassword), tls: tlsCfg,
		implicit: implicit, kick: make(chan struct{})}
	require.NoError(t, s.user.Create("INBOX", nil))
	require.NoError(t, s.user.Create("Archive", nil))
	s.mem.AddUser(s.user)
	s.start("127.0.0.1:0")
	t.Cleanup(s.stop)
	return s
}

func (s *memIMAP) start(addr string) {
	s.t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(s.t, err)
	if s.implicit {
		ln = tls.NewListener(ln, s.tls)
	}
	opts := &imapserver.Options{
		NewSession: func(*imapserver.Conn) (imapserver.Session, *imapserver.GreetingData, error) {
			return idleSession{SessionIMAP4rev2: s.mem.NewSession().(imapserver.SessionIMAP4rev2), srv: s}, nil, nil
		},
		Caps:         imap.CapSet{imap.CapIMAP4rev1: {}, imap.CapIMAP4rev2: {}},
		InsecureAuth: true,
		Logger:       log.New(io.Discard, "", 0),
	}
	if !s.implicit {
		opts.TLSConfig = s.tls
	}
	srv := imapserver.New(opts)
	s.mu.Lock()
	s.srv, s.addr = srv, ln.Addr().String()
	s.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// stop closes the listener and every connection, like a server going away.
func (s *memIMAP) stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// restart brings the server back on the same address.
func (s *memIMAP) restart() { s.start(s.addr) }

// deliver puts a message straight into a mailbox, whether or not the server is up.
func (s *memIMAP) deliver(mailbox, raw string) {
	s.t.Helper()
	_, err := s.user.Append(mailbox, bytes.NewReader([]byte(raw)), &imap.AppendOptions{})
	require.NoError(s.t, err)
	s.notify()
}

// client logs in over IMAP, as a second user agent would.
func (s *memIMAP) client() *imapclient.Client {
	s.t.Helper()
	c, err := imapclient.DialInsecure(s.addr, nil)
	require.NoError(s.t, err)
	s.t.Cleanup(func() { _ = c.Close() })
	require.NoError(s.t, c.Login(testUser, testPassword).Wait())
	return c
}

// appendIMAP appends with the APPEND command (what a mail delivery agent does).
func (s *memIMAP) appendIMAP(mailbox, raw string) {
	s.t.Helper()
	appendIMAP(s.t, s.client(), mailbox, raw)
	s.notify()
}

func appendIMAP(t *testing.T, c *imapclient.Client, mailbox, raw string) {
	t.Helper()
	cmd := c.Append(mailbox, int64(len(raw)), nil)
	_, err := cmd.Write([]byte(raw))
	require.NoError(t, err)
	require.NoError(t, cmd.Close())
	_, err = cmd.Wait()
	require.NoError(t, err)
}

// flags returns each message's flags in a mailbox, by UID.
func flags(t *testing.T, c *imapclient.Client, mailbox string) map[uint32][]imap.Flag {
	t.Helper()
	sel, err := c.Select(mailbox, nil).Wait()
	require.NoError(t, err)
	out := map[uint32][]imap.Flag{}
	if sel.NumMessages == 0 {
		return out
	}
	msgs, err := c.Fetch(imap.SeqSet{{Start: 1, Stop: 0}}, &imap.FetchOptions{UID: true, Flags: true}).Collect()
	require.NoError(t, err)
	for _, m := range msgs {
		out[uint32(m.UID)] = m.Flags
	}
	return out
}

func testMail(n int) string {
	return crlf(fmt.Sprintf("From: Customer %d <c%d@example.com>\nTo: support@acme.test\nSubject: Question %d\n"+
		"Message-ID: <q%d@example.com>\nContent-Type: text/plain\n\nHello, this is question %d.\n", n, n, n, n, n))
}

// observer turns hooks into state tests wait on.
type observer struct {
	mu          sync.Mutex
	cycles      int
	stored      int
	pollErrs    []error
	idles       int
	disconnects []error
	changed     chan struct{}
}

func newObserver() *observer { return &observer{changed: make(chan struct{}, 1)} }

func (o *observer) hooks() Hooks {
	bump := func(fn func()) {
		o.mu.Lock()
		fn()
		o.mu.Unlock()
		select {
		case o.changed <- struct{}{}:
		default:
		}
	}
	return Hooks{
		Polled: func(_ string, n int, err error) {
			bump(func() {
				o.cycles++
				o.stored += n
				if err != nil {
					o.pollErrs = append(o.pollErrs, err)
				}
			})
		},
		Idling:       func(string) { bump(func() { o.idles++ }) },
		Disconnected: func(_ string, err error) { bump(func() { o.disconnects = append(o.disconnects, err) }) },
	}
}

// waitFor blocks until cond holds, re-checking after every hook call.
func (o *observer) waitFor(t *testing.T, what string, cond func(o *observer) bool) {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		o.mu.Lock()
		ok := cond(o)
		o.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-o.changed:
		case <-deadline.C:
			o.mu.Lock()
			defer o.mu.Unlock()
			t.Fatalf("timed out waiting for %s (cycles=%d stored=%d idles=%d poll errors=%v disconnects=%v)",
				what, o.cycles, o.stored, o.idles, o.pollErrs, o.disconnects)
		}
	}
}

func (o *observer) snapshot() (cycles, stored, idles int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cycles, o.stored, o.idles
}

// recorder wraps the pipeline: it can fail on demand and remembers every outcome.
type recorder struct {
	next Pipeline
	fail atomic.Bool

	mu    sync.Mutex
	calls []recorded
}

type recorded struct {
	Event   inbox.Event
	Items   []connectors.Item
	Outcome connectors.Outcome
}

func (r *recorder) Ingest(ctx context.Context, ev *inbox.Event, items []connectors.Item) (connectors.Outcome, error) {
	if r.fail.Load() {
		return connectors.Outcome{}, fmt.Errorf("database unavailable")
	}
	out, err := r.next.Ingest(ctx, ev, items)
	if err == nil {
		r.mu.Lock()
		r.calls = append(r.calls, recorded{Event: *ev, Items: items, Outcome: out})
		r.mu.Unlock()
	}
	return out, err
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// env is a real SQLite inbox behind the email pipeline.
type env struct {
	t   *testing.T
	st  *store.DB
	rec *recorder
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := storetest.OpenSQLite(t)
	return newEnvOn(t, st)
}

func newEnvOn(t *testing.T, st *store.DB) *env {
	t.Helper()
	pol, err := inbox.NewPolicy(inbox.PolicyConfig{})
	require.NoError(t, err)
	svc := inbox.NewService(store.NewInbox(st), pol, inbox.WithClock(func() time.Time { return testNow }))
	router, err := connectors.NewRouter([]connectors.RouteConfig{{
		Name:   "support-mail",
		Match:  connectors.RouteMatch{Source: inbox.StringList{"email"}},
		Thread: connectors.ThreadConfig{Agent: "support", Resource: "mail:{{.Connector}}", Thread: "{{.From}}"},
	}}, []string{"support"})
	require.NoError(t, err)
	log := storetest.Logger(t)
	return &env{t: t, st: st, rec: &recorder{next: connectors.NewPipeline(router, svc, log)}}
}

func (e *env) events() int {
	e.t.Helper()
	n, err := store.NewAdmin(e.st).CountEvents(context.Background())
	require.NoError(e.t, err)
	return n
}

func (e *env) cursor(connector, mailbox string) (string, bool) {
	e.t.Helper()
	v, ok, err := store.NewConnectorState(e.st).ConnectorState(context.Background(), "email/"+connector, mailbox)
	require.NoError(e.t, err)
	return v, ok
}

// records counts inbox records of the thread one sender's mail lands in.
func (e *env) records(connector, from string) int {
	e.t.Helper()
	rs, err := store.NewRecords(e.st).ThreadRecords(context.Background(), inbox.ThreadKey{Agent: "support", Resource: "mail:" + connector, Thread: from})
	require.NoError(e.t, err)
	return len(rs)
}

func testConfig(addr string) Config {
	off := false
	return Config{
		Name: "support", Addr: addr, TLS: &off, Username: testUser, Password: testPassword,
		PollInterval: time.Hour, // only IDLE, PollNow or a reconnect fetch in tests
	}
}

func tinyBackoff() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = time.Millisecond
	b.MaxInterval = 5 * time.Millisecond
	return b
}

// startPoller runs a poller until the test ends.
func (e *env) startPoller(cfg Config, o *observer, opts ...Option) *Poller {
	e.t.Helper()
	opts = append([]Option{WithHooks(o.hooks()), WithBackoff(tinyBackoff)}, opts...)
	p, err := NewPoller(cfg, e.rec, store.NewConnectorState(e.st), service.Base{Now: func() time.Time { return testNow }}, opts...)
	require.NoError(e.t, err)
	require.NoError(e.t, p.Start(context.Background()))
	e.t.Cleanup(func() { stopPoller(e.t, p) })
	return p
}

func stopPoller(t *testing.T, p *Poller) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	require.NoError(t, p.Stop(ctx))
}

// selfSigned returns a server config for 127.0.0.1 and a client config trusting it.
func selfSigned(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "imap.test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}},
		&tls.Config{RootCAs: pool}
}
