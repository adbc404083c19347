package generic

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // Twilio signs with HMAC-SHA1
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// Twilio: X-Twilio-Signature is the base64 HMAC-SHA1, keyed by the auth token, of
// the full public URL followed by the form parameters sorted by name, each name
// then its value. A JSON body is signed through the URL's bodySHA256 parameter
// instead. Twilio signs no timestamp. Like Twilio's libraries, the URL is tried
// with and without its default port.
const (
	twilioSignature   = "X-Twilio-Signature"
	twilioIdempotency = "I-Twilio-Idempotency-Token"
	// headerSignedURL carries the URL the sender signed from Serve to the scheme. It
	// is set by the gateway on every request (a client's own value is replaced).
	headerSignedURL = "X-Signalgate-Signed-Url"
	// twimlEmpty answers every delivery the gateway takes: Twilio wants TwiML
	// (text/xml) from a Messaging webhook, logs error 12300 for any other content type
	// (and may call the fallback URL), and sends nothing back for an empty Response.
	twimlEmpty = `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`
)

func twilioPreset() preset {
	return preset{
		name: "twilio", secret: rawSecret, scheme: schemeFunc(twilioVerify), idHeader: twilioIdempotency,
		signsURL: true, form: true, defaultKind: "message",
		ack: &answer{contentType: echo.MIMETextXMLCharsetUTF8, body: []byte(twimlEmpty)},
		mapping: &Mapping{
			Summary: "$.Body", SourceID: "$.MessageSid", Author: "$.From",
			Fields: map[string]string{"from": "$.From", "to": "$.To", "account": "$.AccountSid", "status": "$.SmsStatus", "call_status": "$.CallStatus"},
		},
	}
}

func twilioVerify(secret []byte, hdr http.Header, body []byte, _ time.Time) error {
	sig := hdr.Get(twilioSignature)
	if sig == "" {
		return errMissingSignature
	}
	got, err := base64.StdEncoding.DecodeString(sig)
	if err != nil {
		return errSignature
	}
	u, err := url.Parse(hdr.Get(headerSignedURL))
	if err != nil || u.Host == "" {
		return errors.New("no URL to verify against")
	}
	var signed []byte
	if sum := u.Query().Get("bodySHA256"); sum != "" {
		want := sha256.Sum256(body)
		if !hmac.Equal([]byte(strings.ToLower(sum)), []byte(hex.EncodeToString(want[:]))) {
			return errSignature
		}
	} else {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			// Nothing to sign over: Twilio's own libraries refuse such a body too.
			return fmt.Errorf("%w: the body is not a form", errSignature)
		}
		// The first value of each name, as Twilio's libraries sign and the mapping reads.
		for _, k := range slices.Sorted(maps.Keys(form)) {
			signed = append(signed, k...)
			signed = append(signed, form.Get(k)...)
		}
	}
	for _, candidate := range []string{withDefaultPort(*u), withoutPort(*u)} {
		if equalMAC(sha1.New, secret, append([]byte(candidate), signed...), got) == nil {
			return nil
		}
	}
	return errSignature
}

func withDefaultPort(u url.URL) string {
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		u.Host = net.JoinHostPort(u.Hostname(), port)
	}
	return u.String()
}

func withoutPort(u url.URL) string {
	if u.Port() != "" {
		u.Host = u.Hostname()
	}
	return u.String()
}

// signedURL is the public URL the sender signed: the connector's public_url, else
// the request's own, its scheme and host from X-Forwarded-Proto and
// X-Forwarded-Host only when the gateway trusts its proxy and the request comes
// from where a proxy would be (loopback, link-local or private addresses, as for
// X-Forwarded-For). Under public_url the query is the request's when it has one:
// Twilio signs the URL it called, with the bodySHA256 it adds for a JSON body.
func (h *Handler) signedURL(c *connector, req *http.Request) string {
	if c.cfg.PublicURL != "" {
		if req.URL.RawQuery == "" {
			return c.cfg.PublicURL
		}
		base, _, _ := strings.Cut(c.cfg.PublicURL, "?")
		return base + "?" + req.URL.RawQuery
	}
	scheme, host := "http", req.Host
	if req.TLS != nil {
		scheme = "https"
	}
	if h.TrustProxy && fromProxy(req.RemoteAddr) {
		if p := req.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
			scheme = p
		}
		if fh := req.Header.Get("X-Forwarded-Host"); fh != "" {
			host = fh
		}
	}
	return scheme + "://" + host + req.URL.RequestURI()
}

func fromProxy(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}
