package connectors

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Sender makes the deliveries a connector's real sender makes: its documented sample
// bodies, signed as the sender signs them, with the headers it sends. `gateway
// deliver` posts them to a running gateway, so a connector can be tried without the
// sender.
type Sender interface {
	// Samples lists the samples the connector's sender can send, default first.
	Samples() []SampleInfo
	// Sample is the named sample ("" the default) as the sender would send it at now:
	// with a fresh delivery id, and its body dated where the sender dates it.
	Sample(name string, now time.Time) (Sample, error)
	// Sign returns the headers the sender sends with s posted to url at now: the
	// sample's own, the signature, the delivery id and timestamp, the User-Agent.
	Sign(s Sample, url string, now time.Time) (http.Header, error)
}

// SampleInfo names one sample and says where it comes from.
type SampleInfo struct {
	Name  string
	About string
}

// Sample is one delivery before it is signed.
type Sample struct {
	Name        string
	ContentType string
	Body        []byte
	// Header holds what the sender sends besides the signature (the event's name).
	Header http.Header
	// DeliveryID is the sender's id of the delivery, in a header or in Body.
	DeliveryID string
}

// SenderOptions are what a sender may need beyond the connector's config.
type SenderOptions struct {
	// SigningKey is an Ed25519 private key (hex, seed or full key) for the schemes
	// whose config holds only the sender's public key (Discord, custom ed25519).
	SigningKey string
}

// ErrNoSample is wrapped by Sample for a name the sender does not have.
var ErrNoSample = errors.New("no such sample")

// UnknownSample is Sample's error for a name not in infos.
func UnknownSample(name string, infos []SampleInfo) error {
	names := make([]string, len(infos))
	for i, s := range infos {
		names[i] = s.Name
	}
	return fmt.Errorf("%w %q (have %s)", ErrNoSample, name, strings.Join(names, ", "))
}

// FreshID is a new delivery id in the style of old: its prefix kept (up to the last
// '_' or '-', else its leading letters: Slack's "Ev"), then random characters of the
// kind old has there (digits stay digits, hex stays hex, upper case stays upper), as
// long as old's and at least 8. Senders mint one per delivery; a sample reusing its
// documented id would be taken for a redelivery.
func FreshID(old string) string {
	cut := strings.LastIndexAny(old, "_-") + 1
	if cut == 0 {
		cut = len(old) - len(strings.TrimLeft(old, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
		if cut == len(old) {
			cut = 0
		}
	}
	prefix, rest := old[:cut], old[cut:]
	const digits, upper = "0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	alphabet := "abcdefghijklmnopqrstuvwxyz" + upper + digits
	switch {
	case rest == "":
	case strings.Trim(rest, digits) == "":
		alphabet = digits
	case strings.Trim(rest, digits+"abcdef") == "":
		alphabet = digits + "abcdef"
	case strings.Trim(rest, digits+"ABCDEF") == "":
		alphabet = digits + "ABCDEF"
	case strings.Trim(rest, digits+upper) == "":
		alphabet = digits + upper
	}
	n := max(len(rest), 8)
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	if alphabet == "0123456789" && b[0] == '0' {
		b[0] = '1' // a snowflake keeps its magnitude
	}
	return prefix + string(b)
}

// SetJSON sets the value at path (dotted, as gjson and sjson read it: "a.b.0.c") in a
// JSON body, keeping the rest of the body byte for byte. The path must exist.
func SetJSON(body []byte, path string, value []byte) ([]byte, error) {
	if !gjson.ValidBytes(body) {
		return nil, errors.New("the body is not JSON")
	}
	if strings.ContainsAny(path, "*?#|@") {
		return nil, fmt.Errorf("%s: wildcards and queries are not allowed; name one field (a.b.0.c)", path)
	}
	if !gjson.GetBytes(body, path).Exists() {
		return nil, fmt.Errorf("%s: no such field in the body%s", path, parentKeys(body, path))
	}
	out, err := sjson.SetRawBytesOptions(body, path, value, &sjson.Options{ReplaceInPlace: false})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// parentKeys names the keys the deepest existing object on path has, for an error.
func parentKeys(body []byte, path string) string {
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		parent := gjson.ParseBytes(body)
		at := "the top level"
		if i > 0 {
			at = strings.Join(parts[:i], ".")
			parent = gjson.GetBytes(body, at)
		}
		if !parent.Exists() {
			continue
		}
		if parent.IsArray() {
			return fmt.Sprintf(" (%s has %d items)", at, len(parent.Array()))
		}
		if !parent.IsObject() {
			return fmt.Sprintf(" (%s is not an object)", at)
		}
		var keys []string
		parent.ForEach(func(k, _ gjson.Result) bool { keys = append(keys, k.String()); return len(keys) < 30 })
		return fmt.Sprintf(" (%s has %s)", at, strings.Join(keys, ", "))
	}
	return ""
}
