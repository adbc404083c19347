package generic

import (
	"crypto/sha1" //nolint:gosec // Intercom and Vercel sign with HMAC-SHA1
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// PagerDuty (v3 webhooks): X-PagerDuty-Signature holds one or more
// comma-separated "v1=<hex>" HMAC-SHA256 signatures of the body (several while a
// secret rotates); any one matching verifies. PagerDuty signs no timestamp.
const (
	pagerdutySignature = "X-PagerDuty-Signature"
	pagerdutyWebhookID = "X-Webhook-Id"
)

func pagerdutyPreset() preset {
	return preset{
		name: "pagerduty", secret: rawSecret, idHeader: pagerdutyWebhookID, keep: []string{"X-Webhook-Subscription"},
		scheme: schemeFunc(pagerdutyVerify),
		mapping: &Mapping{
			Kind: "$.event.event_type", Summary: "$.event.data.title", SourceID: "$.event.data.id", DedupeKey: "$.event.id",
			Number: "$.event.data.number", URL: "$.event.data.html_url", Priority: "$.event.data.urgency", Payload: "$.event.data",
			Priorities: map[string]inbox.Priority{"high": inbox.PriorityHigh, "low": inbox.PriorityLow},
			Fields:     map[string]string{"service": "$.event.data.service.summary", "status": "$.event.data.status", "resource_type": "$.event.resource_type"},
		},
		net: pagerdutyNet,
	}
}

// pagerdutyNet puts an incident's events in its lane, "pagerduty:<incident id>", in the
// state the incident is in (triggered, acknowledged, resolved; rest resolved): an
// incident triggered and resolved before the agent heard of it reaches nothing, one
// the agent was told of is followed by its resolution. Events about something else
// (a note, a service) stay out of lanes.
func pagerdutyNet(doc any, it *connectors.Item) {
	get := func(path string) string {
		p, _ := ParsePath(path)
		s, _ := text(doc, path, p)
		return s
	}
	if get("$.event.resource_type") != "incident" || get("$.event.data.type") != "incident" {
		return
	}
	id, state := get("$.event.data.id"), get("$.event.data.status")
	if id == "" || state == "" {
		return
	}
	it.NetKey, it.State, it.RestState = "pagerduty:"+id, state, "resolved"
}

func pagerdutyVerify(secret []byte, hdr http.Header, body []byte, _ time.Time) error {
	v := hdr.Get(pagerdutySignature)
	if v == "" {
		return errMissingSignature
	}
	for sig := range strings.SplitSeq(v, ",") {
		enc, ok := strings.CutPrefix(strings.TrimSpace(sig), "v1=")
		if !ok {
			continue
		}
		if got, err := hex.DecodeString(enc); err == nil && equalMAC(sha256.New, secret, body, got) == nil {
			return nil
		}
	}
	return errSignature
}

// Intercom: X-Hub-Signature is "sha1=<hex>", HMAC-SHA1 of the body keyed by the
// app's client secret. The notification id is in the body only; no timestamp is
// signed.
const intercomSignature = "X-Hub-Signature"

func intercomPreset() preset {
	return preset{
		name: "intercom", secret: rawSecret, idPath: "$.id",
		scheme: bodyOnly(bodyMACWith(sha1.New, intercomSignature, "sha1=", hex.DecodeString)),
		mapping: &Mapping{
			Kind: "$.topic", Summary: "$.data.item.title", SourceID: "$.data.item.id", DedupeKey: "$.id", Payload: "$.data.item",
			Fields: map[string]string{"item_type": "$.data.item.type", "state": "$.data.item.state", "app_id": "$.app_id"},
		},
	}
}

// Vercel: x-vercel-signature is the hex HMAC-SHA1 of the body keyed by the
// webhook's secret. The event id is in the body only; no timestamp is signed.
const vercelSignature = "x-vercel-signature"

func vercelPreset() preset {
	return preset{
		name: "vercel", secret: rawSecret, idPath: "$.id",
		scheme: bodyOnly(bodyMACWith(sha1.New, vercelSignature, "", hex.DecodeString)),
		mapping: &Mapping{
			Kind: "$.type", SourceID: "$.payload.deployment.id", DedupeKey: "$.id", URL: "$.payload.links.deployment", Payload: "$.payload",
			Fields: map[string]string{"project": "$.payload.project.id", "target": "$.payload.target", "name": "$.payload.name", "team": "$.payload.team.id"},
		},
	}
}

// Discord interactions: X-Signature-Ed25519 is the hex Ed25519 signature of
// X-Signature-Timestamp followed by the body, by the application's key; secret is
// its public key (hex). Discord sets no window; a signed timestamp older than 5
// minutes is refused as a replay. A PING is answered PONG and not stored; any
// other interaction is stored and answered "deferred" (type 5), so the agent can
// follow up with the interaction token in the payload.
const (
	discordSignature = "X-Signature-Ed25519"
	discordTimestamp = "X-Signature-Timestamp"
	discordPing      = 1
	discordPong      = 1
	discordDeferred  = 5
)

func discordPreset() preset {
	v := Verify{Header: discordSignature, Algorithm: "ed25519", Encoding: "hex", Signed: "{timestamp}{body}", TimestampHeader: discordTimestamp}
	return preset{
		name: "discord", secret: ed25519PublicKey, scheme: customPreset(&v).scheme, idPath: "$.id",
		timestampHeader: discordTimestamp, keep: []string{discordTimestamp}, defaultKind: "interaction",
		ping: discordPingReply, ack: &answer{contentType: echo.MIMEApplicationJSON, body: fmt.Appendf(nil, `{"type":%d}`, discordDeferred)},
		mapping: &Mapping{
			Kind: "$.data.name", SourceID: "$.id", DedupeKey: "$.id", Author: "$.member.user.username",
			Fields: map[string]string{"guild": "$.guild_id", "channel": "$.channel_id", "custom_id": "$.data.custom_id", "user_id": "$.member.user.id"},
		},
	}
}

func discordPingReply(body []byte) (any, bool) {
	var doc struct {
		Type int `json:"type"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.Type != discordPing {
		return nil, false
	}
	return map[string]int{"type": discordPong}, true
}
