package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/admin"
)

// cookieName is the session cookie; it never holds the token itself.
const cookieName = "signalgate_console"

// session is what the signed cookie carries.
type session struct {
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

// readSession returns the request's valid session, or nil.
func (c *Console) readSession(ec echo.Context) *session {
	ck, err := ec.Cookie(cookieName)
	if err != nil || len(ck.Value) > 4096 {
		return nil
	}
	var s session
	if err := c.codec.Decode(cookieName, ck.Value, &s); err != nil {
		return nil
	}
	if c.d.Now().Unix() >= s.Expires || s.CSRF == "" {
		return nil
	}
	// The token must still be configured, with the same value and every scope the
	// session carries.
	p, ok := c.prints[s.Name]
	if !ok || subtle.ConstantTimeCompare([]byte(p.sum), []byte(s.Print)) != 1 {
		return nil
	}
	for _, sc := range s.Scopes {
		if !(admin.Token{Scopes: p.scopes}).Has(sc) {
			return nil
		}
	}
	return &s
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
		s := c.readSession(ec)
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

// checkCSRF refuses a form without the session's token.
func (c *Console) checkCSRF(next echo.HandlerFunc) echo.HandlerFunc {
	return func(ec echo.Context) error {
		s := sessionOf(ec)
		got := ec.Request().Header.Get("X-CSRF-Token")
		if got == "" {
			got = ec.FormValue("csrf")
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
	if c.readSession(ec) != nil {
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
	tok, ok := c.d.Admin.Authenticate(ec.FormValue("token"))
	if !ok {
		c.log.Info("console sign-in refused", "remote_ip", ec.RealIP())
		return c.render(ec, http.StatusUnauthorized, "signin", signinPage{Next: next, NoTokens: len(c.prints) == 0,
			Error: "That is not a configured admin token. Use a token from admin.tokens in config.yaml."})
	}
	csrf := make([]byte, 32)
	if _, err := rand.Read(csrf); err != nil {
		return err
	}
	expires := c.d.Now().Add(c.cfg.SessionTTL)
	s := session{Name: tok.Name, Print: c.fingerprint(tok.Token), Scopes: tok.Scopes,
		CSRF: base64.RawURLEncoding.EncodeToString(csrf), Expires: expires.Unix()}
	value, err := c.codec.Encode(cookieName, s)
	if err != nil {
		return err
	}
	c.writeCookie(ec, value, expires)
	c.log.Info("console signed in", "token", tok.Name, "remote_ip", ec.RealIP())
	return ec.Redirect(http.StatusSeeOther, next)
}

func (c *Console) signout(ec echo.Context) error {
	c.writeCookie(ec, "", time.Unix(0, 0))
	c.log.Info("console signed out", "token", sessionOf(ec).Name)
	return ec.Redirect(http.StatusSeeOther, Prefix+"/signin?signedout=1")
}
