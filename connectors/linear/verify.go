package linear

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/signalgate/signalgate/connectors"
)

// The headers Linear sends with every webhook delivery.
const (
	// SignatureHeader is the hex HMAC-SHA256 of the body keyed by the webhook's
	// signing secret.
	SignatureHeader = "Linear-Signature"
	// DeliveryHeader is the delivery's id (a UUID), the same on a redelivery.
	DeliveryHeader = "Linear-Delivery"
	// EventHeader names the payload's type (Issue, Comment, AgentSessionEvent…).
	EventHeader = "Linear-Event"
)

// Tolerance is how far a delivery's signed webhookTimestamp may be from now, as
// @linear/sdk's LinearWebhookClient allows.
const Tolerance = time.Minute

// Sign is the Linear-Signature of body under key.
func Sign(key, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify says why a Linear delivery is not authentic under key (nil when it is): its
// Linear-Signature must be the body's HMAC, and the body's webhookTimestamp (unix
// milliseconds, read only once the signature proved the body authentic) within
// Tolerance of now; its errors are connectors' refusal reasons. The linear connector and the generic connector's linear preset
// both verify with it.
func Verify(key []byte, hdr http.Header, body []byte, now time.Time) error {
	v := hdr.Get(SignatureHeader)
	if v == "" {
		return connectors.ReasonSignatureMissing
	}
	got, err := hex.DecodeString(v)
	if err != nil {
		return fmt.Errorf("%w: not hex", connectors.ReasonSignatureMismatch)
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return connectors.ReasonSignatureMismatch
	}
	return fresh(body, now)
}

func fresh(body []byte, now time.Time) error {
	var doc struct {
		WebhookTimestamp json.Number `json:"webhookTimestamp"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%w: no webhookTimestamp in the body", connectors.ReasonTimestampMissing)
	}
	ms, err := doc.WebhookTimestamp.Int64()
	if err != nil {
		return fmt.Errorf("%w: webhookTimestamp is not unix milliseconds", connectors.ReasonTimestampMalformed)
	}
	if d := now.Sub(time.UnixMilli(ms)); d > Tolerance || d < -Tolerance {
		return connectors.ReasonTimestampWindow
	}
	return nil
}
