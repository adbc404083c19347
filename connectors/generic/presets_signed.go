package generic

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"time"

	"github.com/signalgate/signalgate/connectors/linear"
	"github.com/signalgate/signalgate/inbox"
)

// bodyHMAC is the scheme of senders that sign the raw body alone with HMAC-SHA256
// in one header (Linear, Sentry: hex; Shopify: base64).
func bodyHMAC(header string, decode func(string) ([]byte, error)) func([]byte, http.Header, []byte) error {
	return bodyMACWith(sha256.New, header, "", decode)
}

// bodyMACWith is bodyHMAC with another hash and a prefix before the signature.
func bodyMACWith(newHash func() hash.Hash, header, prefix string, decode func(string) ([]byte, error)) func([]byte, http.Header, []byte) error {
	return func(secret []byte, hdr http.Header, body []byte) error {
		v, ok := strings.CutPrefix(hdr.Get(header), prefix)
		if !ok || v == "" {
			return errMissingSignature
		}
		got, err := decode(v)
		if err != nil {
			return fmt.Errorf("%w: not encoded as expected", errSignature)
		}
		return equalMAC(newHash, secret, body, got)
	}
}

// bodyOnly adapts a body signature to a scheme: these senders sign no timestamp.
func bodyOnly(sig func([]byte, http.Header, []byte) error) scheme {
	return schemeFunc(func(secret []byte, hdr http.Header, body []byte, _ time.Time) error {
		return sig(secret, hdr, body)
	})
}

// Linear: package linear verifies (Linear-Signature, the hex HMAC-SHA256 of the body,
// and the body's webhookTimestamp within a minute of now), as the linear connector does.
const (
	linearSignature = linear.SignatureHeader
	linearDelivery  = linear.DeliveryHeader
	linearEvent     = linear.EventHeader
	linearTolerance = linear.Tolerance
)

func linearPreset() preset {
	return preset{
		name: "linear", secret: rawSecret, idHeader: linearDelivery, keep: []string{linearEvent},
		scheme: schemeFunc(func(secret []byte, hdr http.Header, body []byte, now time.Time) error {
			return linear.Verify(secret, hdr, body, now)
		}),
		mapping: &Mapping{
			Kind: "$.type", KindSuffix: "$.action", Summary: "$.data.title", SourceID: "$.data.identifier",
			Author: "$.actor.name", URL: "$.url",
			Fields: map[string]string{"team": "$.data.team.key", "identifier": "$.data.identifier", "state": "$.data.state.name"},
		},
	}
}

// Sentry: Sentry-Hook-Signature is the hex HMAC-SHA256 of the body keyed by the
// integration's client secret. Sentry-Hook-Timestamp is not signed, so there is
// no replay window to enforce; Sentry-Hook-Resource names the event.
const (
	sentrySignature = "Sentry-Hook-Signature"
	sentryResource  = "Sentry-Hook-Resource"
	sentryRequestID = "Request-ID"
)

func sentryPreset() preset {
	return preset{
		name: "sentry", secret: rawSecret, scheme: bodyOnly(bodyHMAC(sentrySignature, hex.DecodeString)), idHeader: sentryRequestID, kindHeader: sentryResource,
		keep: []string{"Sentry-Hook-Timestamp"},
		mapping: &Mapping{
			KindSuffix: "$.action", Summary: "$.data.issue.title", SourceID: "$.data.issue.id",
			URL: "$.data.issue.web_url", Author: "$.actor.name", Priority: "$.data.issue.level",
			Priorities: map[string]inbox.Priority{"fatal": inbox.PriorityUrgent, "error": inbox.PriorityHigh, "warning": inbox.PriorityMedium, "info": inbox.PriorityLow, "debug": inbox.PriorityLow},
			Fields:     map[string]string{"project": "$.data.issue.project.slug", "short_id": "$.data.issue.shortId", "level": "$.data.issue.level"},
		},
	}
}

// Shopify: X-Shopify-Hmac-Sha256 is the base64 HMAC-SHA256 of the body keyed by
// the app's client secret; X-Shopify-Topic names the event. Shopify signs no
// timestamp.
const (
	shopifySignature = "X-Shopify-Hmac-Sha256"
	shopifyTopic     = "X-Shopify-Topic"
	shopifyWebhookID = "X-Shopify-Webhook-Id"
	shopifyShop      = "X-Shopify-Shop-Domain"
)

func shopifyPreset() preset {
	return preset{
		name: "shopify", secret: rawSecret, scheme: bodyOnly(bodyHMAC(shopifySignature, base64.StdEncoding.DecodeString)), idHeader: shopifyWebhookID, kindHeader: shopifyTopic,
		keep: []string{shopifyShop, "X-Shopify-Event-Id", "X-Shopify-Triggered-At"},
		mapping: &Mapping{
			SourceID: "$.admin_graphql_api_id",
			Fields:   map[string]string{"name": "$.name", "email": "$.email", "customer": "$.customer.id"},
		},
	}
}
