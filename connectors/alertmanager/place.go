package alertmanager

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Place is where an answer to an alert goes: the fields of an alertmanager replyTo
// besides source and connector. Fingerprint and AlertLabels are the alert's own, kept
// from its notification; Silence is the agent's: how long to silence it.
type Place struct {
	Fingerprint string   `json:"fingerprint,omitempty" doc:"Alertmanager: the alert's fingerprint."`
	AlertLabels []string `json:"alertLabels,omitempty" doc:"Alertmanager: the alert's labels as name=value, the silence's matchers (always the alert's own)."`
	// Silence is how long the answer silences the alert (a Go duration: 30m, 2h), with
	// the reply's text as the silence's comment.
	Silence string `json:"silence,omitempty" doc:"Alertmanager: silence the alert for this long (30m, 2h; at most the connector's max_silence), the reply's text its comment. Required: an answer to an alert is a silence."`
}

// PlaceCodec reads alert places (the kinds table's row carries it).
var PlaceCodec reply.PlaceCodec = reply.Codec[Place]{}

var _ reply.Instructed = Place{}

// Key is the alert's fingerprint.
func (p Place) Key() string { return fmt.Sprintf("%q", strings.ToLower(p.Fingerprint)) }

// Describe is "alert HighLatency 1a2b3c4d5e6f7a8b", with the silence asked.
func (p Place) Describe() string {
	d := "alert "
	if name := p.label("alertname"); name != "" {
		d += name + " "
	}
	d += p.Fingerprint
	if p.Silence != "" {
		d += ", silence " + p.Silence
	}
	return d
}

// WatchResource is the alert's fingerprint.
func (p Place) WatchResource() (string, bool) {
	if !validFingerprint(p.Fingerprint) {
		return "", false
	}
	return strings.ToLower(p.Fingerprint), true
}

// Instruct is the alert's place with the silence the agent asked.
func (p Place) Instruct(asked reply.Place) reply.Place {
	if a, ok := asked.(Place); ok {
		p.Silence = a.Silence
	}
	return p
}

func (p Place) label(name string) string {
	for _, l := range p.AlertLabels {
		if k, v, ok := strings.Cut(l, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// WatchResource reads an alert watch resource: its fingerprint (hex), lower-cased. A
// watch of an alert ends when it resolves.
func WatchResource(r string) (watch.Resource, error) {
	r = strings.TrimSpace(r)
	if !validFingerprint(r) {
		return watch.Resource{}, errors.New("want an alert's fingerprint (hex, as Alertmanager's API and webhook give it)")
	}
	return watch.Resource{Canonical: strings.ToLower(r)}, nil
}

// matchers are the equality matchers of the place's labels.
func (p Place) matchers() ([]matcher, error) {
	out := make([]matcher, 0, len(p.AlertLabels))
	for _, l := range p.AlertLabels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || !validLabelName(k) {
			return nil, fmt.Errorf("replyTo.alertLabels: %q is not name=value", l)
		}
		out = append(out, matcher{Name: k, Value: v, IsEqual: true})
	}
	if len(out) == 0 {
		return nil, errors.New("replyTo.alertLabels: the alert has no labels to silence it by")
	}
	return out, nil
}

func (p Place) name() string { return cmp.Or(p.label("alertname"), p.Fingerprint) }
