package generic

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/signalgate/signalgate/stdwebhooks"
)

// Stripe: Stripe-Signature "t=<unix>,v1=<hex>[,v1=…][,v0=…]", HMAC-SHA256 of
// "{t}.{body}" keyed by the whole whsec_… string, 5 minutes of tolerance (Stripe's
// default). The event id is in the body only.
const (
	stripeHeader    = "Stripe-Signature"
	stripeTolerance = 5 * time.Minute
)

func stripePreset() preset {
	return preset{
		name: "stripe", scheme: schemeFunc(stripeVerify), secret: rawSecret, idPath: "$.id",
		mapping: &Mapping{
			Kind: "$.type", DedupeKey: "$.id", SourceID: "$.data.object.id", Payload: "$.data.object",
			Fields: map[string]string{"customer": "$.data.object.customer", "object": "$.data.object.object"},
		},
	}
}

func stripeVerify(secret []byte, hdr http.Header, body []byte, now time.Time) error {
	v := hdr.Get(stripeHeader)
	if v == "" {
		return errMissingSignature
	}
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(v, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = val
		case "v1": // v0 is the test-mode scheme Stripe no longer signs with
			sigs = append(sigs, val)
		}
	}
	if err := withinTolerance(ts, now, stripeTolerance); err != nil {
		return err
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	want := m.Sum(nil)
	for _, s := range sigs {
		if got, err := hex.DecodeString(s); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return errSignature
}

// Svix (and Resend, which sends through Svix): Standard Webhooks under svix-*
// header names, with whsec_<base64> secrets.
const (
	svixID        = "svix-id"
	svixTimestamp = "svix-timestamp"
	svixSignature = "svix-signature"
)

func svixPreset(name string, m *Mapping) preset {
	return preset{
		name: name, scheme: schemeFunc(svixVerify), secret: stdwebhooks.ParseSecret,
		idHeader: svixID, timestampHeader: svixTimestamp, keep: []string{svixTimestamp}, mapping: m,
	}
}

func svixVerify(secret []byte, hdr http.Header, body []byte, now time.Time) error {
	std := http.Header{}
	std.Set(stdwebhooks.HeaderID, hdr.Get(svixID))
	std.Set(stdwebhooks.HeaderTimestamp, hdr.Get(svixTimestamp))
	std.Set(stdwebhooks.HeaderSignature, hdr.Get(svixSignature))
	return stdVerify(secret, std, body, now)
}

// resendMapping reads Resend's {type, created_at, data} events: email and contact
// events name their subject and ids in data.
func resendMapping() *Mapping {
	return &Mapping{
		Kind: "$.type", Summary: "$.data.subject", SourceID: "$.data.email_id", Payload: "$.data",
		Fields: map[string]string{"email_id": "$.data.email_id", "from": "$.data.from", "to": "$.data.to.0"},
	}
}

// GitLab: X-Gitlab-Token is the configured secret token itself, compared in
// constant time. It signs nothing: anyone who learns the token can forge a body.
const (
	gitlabToken = "X-Gitlab-Token"
	gitlabEvent = "X-Gitlab-Event"
	gitlabUUID  = "X-Gitlab-Event-UUID"
)

func gitlabPreset() preset {
	return preset{
		name: "gitlab", scheme: schemeFunc(gitlabVerify), secret: rawSecret, idHeader: gitlabUUID,
		keep: []string{gitlabEvent},
		mapping: &Mapping{
			Kind: "$.object_kind", Summary: "$.object_attributes.title", SourceID: "$.object_attributes.iid",
			Repo: "$.project.path_with_namespace", Number: "$.object_attributes.iid", Author: "$.user.username",
			URL: "$.object_attributes.url", Branch: "$.object_attributes.source_branch",
			Fields: map[string]string{"action": "$.object_attributes.action", "ref": "$.ref"},
		},
	}
}

func gitlabVerify(secret []byte, hdr http.Header, _ []byte, _ time.Time) error {
	got := hdr.Get(gitlabToken)
	if got == "" {
		return errMissingSignature
	}
	if !hmac.Equal([]byte(got), secret) {
		return errSignature
	}
	return nil
}
