package linear

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/connectors"
)

// samples are Linear deliveries of the shapes @linear/sdk's webhook types give
// (AgentSessionEventWebhookPayload, EntityWebhookPayload with Comment, Issue and Project
// data), named type.action.
//
//go:embed samples/*.json
var sampleFiles embed.FS

// userAgent is what Linear's webhook deliveries carry.
const userAgent = "Linear-Webhook"

// defaultSample is the one gateway deliver sends when none is named.
const defaultSample = "AgentSessionEvent.created"

// sender posts the samples to one connector, signed with its current secret and dated
// now, as Linear sends them.
type sender struct {
	key []byte
	org string // the connector's organization_id, put in the samples ("" keeps theirs)
}

// NewSender is the sender of a Linear connector: Linear's own deliveries.
func NewSender(c Config, _ connectors.SenderOptions) (connectors.Sender, error) {
	secrets := c.VerifySecrets()
	if len(secrets) == 0 || secrets[0] == "" {
		return nil, errors.New("the connector has no webhook_secret to sign with")
	}
	return sender{key: []byte(secrets[0].Reveal()), org: c.OrganizationID}, nil
}

// SampleNames lists the embedded samples as type.action, the default first.
func SampleNames() []string {
	files, _ := fs.Glob(sampleFiles, "samples/*.json")
	out := []string{defaultSample}
	for _, f := range files {
		if n := strings.TrimSuffix(path.Base(f), ".json"); n != defaultSample {
			out = append(out, n)
		}
	}
	return out
}

func (sender) Samples() []connectors.SampleInfo {
	var out []connectors.SampleInfo
	for _, n := range SampleNames() {
		out = append(out, connectors.SampleInfo{Name: n, About: "a Linear " + strings.Replace(n, ".", " ", 1) + " delivery, of @linear/sdk's webhook payload types"})
	}
	return out
}

// Sample is the named delivery dated now: its webhookTimestamp now (it is signed and
// must be fresh), its webhookId and delivery id new.
func (s sender) Sample(name string, now time.Time) (connectors.Sample, error) {
	if name == "" {
		name = defaultSample
	}
	body, err := sampleFiles.ReadFile("samples/" + name + ".json")
	if err != nil {
		return connectors.Sample{}, connectors.UnknownSample(name, s.Samples())
	}
	if body, err = connectors.SetJSON(body, "webhookTimestamp", []byte(strconv.FormatInt(now.UnixMilli(), 10))); err != nil {
		return connectors.Sample{}, err
	}
	id, _ := json.Marshal(uuid.NewString())
	if body, err = connectors.SetJSON(body, "webhookId", id); err != nil {
		return connectors.Sample{}, err
	}
	if s.org != "" {
		org, _ := json.Marshal(s.org)
		if body, err = connectors.SetJSON(body, "organizationId", org); err != nil {
			return connectors.Sample{}, err
		}
	}
	typ, _, _ := strings.Cut(name, ".")
	hdr := http.Header{}
	hdr.Set(EventHeader, typ)
	return connectors.Sample{Name: name, ContentType: "application/json; charset=utf-8", Body: body, Header: hdr, DeliveryID: uuid.NewString()}, nil
}

// Sign adds what Linear sends: the delivery id, its User-Agent and Linear-Signature.
func (s sender) Sign(sample connectors.Sample, _ string, _ time.Time) (http.Header, error) {
	hdr := sample.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	hdr.Set("Content-Type", sample.ContentType)
	hdr.Set("User-Agent", userAgent)
	hdr.Set(DeliveryHeader, sample.DeliveryID)
	hdr.Set(SignatureHeader, Sign(s.key, sample.Body))
	return hdr, nil
}
