package console

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/admin"
)

// cookieName is the session cookie; it never holds the token itself.
const cookieName = "signalgate_console"

// session is what the signed cookie carries. The session lives server-side too (Sessions,
// by ID): the cookie alone, copied before a sign-out, is no session.
type session struct {
	ID      string   `json:"i"` // the server-side session's id (stored hashed)
	Name    string   `json:"n"` // the admin token's name
	Print   string   `json:"p"` // fingerprint of the token's value
	Scopes  []string `json:"s"`
	CSRF    string   `json:"c"` // per session; every form carries it
	Expires int64    `json:"e"` // unix seconds
}

func (s *session) can(scope string) bool {
	return admin.Token{Scopes: s.Scopes}.Has(scope)
}

const sessionCtx = "signalgate.console_session"

func sessionOf(ec echo.Context) *session {
	s, _ := ec.Get(sessionCtx).(*session)
	return s
}

// readSession returns the request's live session, or nil; err is the session store's.
func (c *Console) readSession(ec echo.Context) (*session, error) {
	ck, err := ec.Cookie(cookieName)
	if err != nil {
		return nil, nil
	}
	return c.liveSession(ec.Request().Context(), ck.Value)
}

// liveSession is the session a cookie's value names while it lives, or nil.
func (c *Console) liveSession(ctx context.Context, cookie string) (*session, error) {
	if len(cookie) > 4096 {
		return nil, nil
	}
	var s session
	if err := c.codec.Decode(cookieName, cookie, &s); err != nil {
		return nil, nil
	}
	if c.d.Now().Unix() >= s.Expires || s.CSRF == "" || s.ID == "" {
		return nil, nil
	}
	// The token must still be configured, with the same value and every scope the
	// session carries.
	p, ok := c.prints[s.Name]
	if !ok || subtle.ConstantTimeCompare([]byte(p.sum), []byte(s.Print)) != 1 {
		return nil, nil
	}
	for _, sc := range s.Scopes {
		if !(admin.Token{Scopes: p.scopes}).Has(sc) {
			return nil, nil
		}
	}
	// Last, the server-side row: gone once signed out, here or on another replica.
	live, err := c.d.Sessions.ConsoleSessionLive(ctx, s.ID, c.d.Now())
	if err != nil || !live {
		return nil, err
	}
	return &s, nil
}

func (c *Console) writeCookie(ec echo.Context, value string, expires time.Time) {
	ec.SetCookie(&http.Cookie{
		Name: cookieName, Value: value, Path: Prefix, Expires: expires,
		MaxAge: max(int(time.Until(expires).Seconds()), -1), HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: ec.Scheme() == "https",
	})
}

// authenticate lets signed-in requests through; others go to the sign-in page (a
// partial update or a stream gets 401).
func (c *Console) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		s, err := c.readSession(ec)
		if err != nil {
			return c.failErr(ec, err)
		}
		if s == nil {
			if ec.Request().Method != http.MethodGet || ec.Request().Header.Get("HX-Request") != "" ||
				strings.HasSuffix(ec.Path(), "/stream") {
				ec.Response().Header().Set("HX-Redirect", Prefix+"/signin")
				return c.fail(ec, http.StatusUnauthorized, "Your console session has ended: sign in again.")
			}
			return ec.Redirect(http.StatusSeeOther, Prefix+"/signin?next="+urlQueryEscape(localPath(ec.Request().URL.RequestURI())))
		}
		ec.Set(sessionCtx, s)
		return next(ec)
	}
}

// checkCSRF refuses a form without the session's token. The token is taken from the
// header or the form body only: one in a URL ends up in logs and history, so it is refused.
func (c *Console) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		s := sessionOf(ec)
		if ec.QueryParams().Has("csrf") {
			return c.fail(ec, http.StatusBadRequest, "The CSRF token goes in the form body or the X-CSRF-Token header, never in the URL.")
		}
		got := ec.Request().Header.Get("X-CSRF-Token")
		if got == "" {
			got = ec.Request().PostFormValue("csrf")
		}
		if s == nil || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRF)) != 1 {
			return c.fail(ec, http.StatusForbidden, "This form is stale or was not sent from the console: reload the page and try again.")
		}
		return next(ec)
	}
}

// requireWrite refuses changes to a read-only session (which renders no write buttons).
func (c *Console) requireWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		if s := sessionOf(ec); s == nil || !s.can(admin.ScopeWrite) {
			return c.fail(ec, http.StatusForbidden, "Your admin token is read-only: this action needs the write scope.")
		}
		return next(ec)
	}
}

func (c *Console) signinForm(ec echo.Context) error {
	s, err := c.readSession(ec)
	if err != nil {
		return c.failErr(ec, err)
	}
	if s != nil {
		return ec.Redirect(http.StatusSeeOther, localPath(ec.QueryParam("next")))
	}
	return c.render(ec, http.StatusOK, "signin", signinPage{Next: localPath(ec.QueryParam("next")), NoTokens: len(c.prints) == 0})
}

type signinPage struct {
	Next     string
	Error    string
	NoTokens bool
}

func (c *Console) signin(ec echo.Context) error {
	next := localPath(ec.FormValue("next"))
	if ec.QueryParams().Has("token") {
		// Already in some log or history by now: refused so no client comes to rely on it.
		return c.render(ec, http.StatusBadRequest, "signin", signinPage{Next: next, NoTokens: len(c.prints) == 0,
			Error: "The admin token goes in the form, never in the URL: paste it into the field below."})
	}
	tok, ok := c.d.Admin.Authenticate(ec.Request().PostFormValue("token"))
	if !ok {
		c.log.Info("console sign-in refused", "remote_ip", ec.RealIP())
		return c.render(ec, http.StatusUnauthorized, "signin", signinPage{Next: next, NoTokens: len(c.prints) == 0,
			Error: "That is not a configured admin token. Use a token from admin.tokens in config.yaml."})
	}
	id, csrf := make([]byte, 32), make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		return fmt.Errorf("console: session id: %w", err)
	}
	if _, err := rand.Read(csrf); err != nil {
		return fmt.Errorf("console: session csrf token: %w", err)
	}
	now := c.d.Now()
	expires := now.Add(c.cfg.SessionTTL)
	s := session{ID: base64.RawURLEncoding.EncodeToString(id), Name: tok.Name, Print: c.fingerprint(tok.Token.Reveal()),
		Scopes: tok.Scopes, CSRF: base64.RawURLEncoding.EncodeToString(csrf), Expires: expires.Unix()}
	value, err := c.codec.Encode(cookieName, s)
	if err != nil {
		return fmt.Errorf("console: encode session cookie: %w", err)
	}
	if err := c.d.Sessions.CreateConsoleSession(ec.Request().Context(), s.ID, tok.Name, now, expires); err != nil {
		return c.failErr(ec, err)
	}
	c.writeCookie(ec, value, expires)
	c.log.Info("console signed in", "token", tok.Name, "remote_ip", ec.RealIP())
	return ec.Redirect(http.StatusSeeOther, next)
}

// signout ends this browser's session on every replica: a copy of its cookie taken
// before is no session after.
func (c *Console) signout(ec echo.Context) error {
	s := sessionOf(ec)
	if err := c.d.Sessions.DeleteConsoleSession(ec.Request().Context(), s.ID); err != nil {
		return c.failErr(ec, err)
	}
	c.log.Info("console signed out", "token", s.Name)
	return c.signedOut(ec)
}

// signoutEverywhere ends every session signed in with this session's admin token, in
// every browser (a forgotten one, or one whose cookie was copied).
func (c *Console) signoutEverywhere(ec echo.Context) error {
	s := sessionOf(ec)
	n, err := c.d.Sessions.DeleteConsoleSessionsOf(ec.Request().Context(), s.Name)
	if err != nil {
		return c.failErr(ec, err)
	}
	c.log.Info("console signed out everywhere", "token", s.Name, "sessions", n)
	return c.signedOut(ec)
}

// signedOut clears this browser's cookie and shows the sign-in page.
func (c *Console) signedOut(ec echo.Context) error {
	c.writeCookie(ec, "", time.Unix(0, 0))
	return ec.Redirect(http.StatusSeeOther, Prefix+"/signin?signedout=1")
}
