package alertmanager

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Kinds of the items, and the states of their lanes.
const (
	KindFiring    = "alert-firing"
	KindResolved  = "alert-resolved"
	StateFiring   = "firing"
	StateResolved = "resolved"
	// NetKeyPrefix starts every alert's lane: "alert:<fingerprint>".
	NetKeyPrefix = "alert:"
)

// MaxAlerts bounds the alerts one notification may carry (Alertmanager's max_alerts
// and Grafana's Max Alerts cut longer ones; a body over it is invalid).
const MaxAlerts = 1000

// summaryLen bounds an item's summary; a model reads it on every delivery.
const summaryLen = 500

// Notification is the body Alertmanager's webhook receiver posts (version 4), with the
// fields Grafana's alerting webhook adds.
type Notification struct {
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int               `json:"truncatedAlerts"`
	Status            string            `json:"status"`
	Receiver          string            `json:"receiver"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Alerts            []Alert           `json:"alerts"`
	// Grafana's.
	OrgID   *int64 `json:"orgId,omitempty"`
	Title   string `json:"title,omitempty"`
	State   string `json:"state,omitempty"`
	Message string `json:"message,omitempty"`
}

// Alert is one alert of a notification.
type Alert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
	// Grafana's.
	SilenceURL   string             `json:"silenceURL,omitempty"`
	DashboardURL string             `json:"dashboardURL,omitempty"`
	PanelURL     string             `json:"panelURL,omitempty"`
	ImageURL     string             `json:"imageURL,omitempty"`
	Values       map[string]float64 `json:"values,omitempty"`
	ValueString  string             `json:"valueString,omitempty"`
}

// grafana reports a notification from Grafana (its version "1" and its own fields).
func (n *Notification) grafana() bool { return n.Version == "1" || n.OrgID != nil }

// decode reads a notification, refusing what is not one.
func decode(body []byte) (*Notification, error) {
	if t := bytes.TrimSpace(body); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("body: want a JSON object (an Alertmanager webhook notification)")
	}
	var n Notification
	if err := json.Unmarshal(body, &n); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, fmt.Errorf("%s: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return nil, fmt.Errorf("malformed JSON body: %w", err)
	}
	switch n.Version {
	case "4", "1":
	case "":
		return nil, errors.New(`version: required ("4" from Alertmanager, "1" from Grafana)`)
	default:
		return nil, fmt.Errorf(`version: %q is not a webhook version this connector reads (want "4" from Alertmanager, "1" from Grafana)`, n.Version)
	}
	if len(n.Alerts) > MaxAlerts {
		return nil, fmt.Errorf("alerts: %d, at most %d", len(n.Alerts), MaxAlerts)
	}
	for i, a := range n.Alerts {
		switch {
		case a.Status != StateFiring && a.Status != StateResolved:
			return nil, fmt.Errorf("alerts[%d].status: %q (want firing or resolved)", i, a.Status)
		case !validFingerprint(a.Fingerprint):
			return nil, fmt.Errorf("alerts[%d].fingerprint: %q is not an alert fingerprint (hex)", i, a.Fingerprint)
		case len(a.Labels) == 0:
			return nil, fmt.Errorf("alerts[%d].labels: required", i)
		}
		for name := range a.Labels {
			if !validLabelName(name) {
				return nil, fmt.Errorf("alerts[%d].labels: %q is not a label name", i, name)
			}
		}
	}
	return &n, nil
}

// validFingerprint: Alertmanager's and Grafana's fingerprints are 16 hex digits.
func validFingerprint(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

// items are the notification's alerts, one item each, verified by verifiedBy.
func (c *connector) items(n *Notification, verifiedBy string) []connectors.Item {
	out := make([]connectors.Item, 0, len(n.Alerts))
	for _, a := range n.Alerts {
		out = append(out, c.item(n, a, verifiedBy))
	}
	return out
}

func (c *connector) item(n *Notification, a Alert, verifiedBy string) connectors.Item {
	fp := strings.ToLower(a.Fingerprint)
	name := cmp.Or(a.Labels["alertname"], "alert")
	where := scope(a.Labels)
	kind, prio, occurred := KindFiring, c.priority(a.Labels), a.StartsAt
	var summary string
	if a.Status == StateResolved {
		kind, prio, occurred = KindResolved, inbox.PriorityMedium, a.EndsAt
		summary = "Resolved: " + name + where
	} else {
		summary = "Firing: " + name + where
		if text := cmp.Or(a.Annotations["summary"], a.Annotations["description"], a.Annotations["message"]); text != "" {
			summary += ": " + text
		}
	}
	attrs := inbox.Attributes{}.Set("alertname", name).Set("status", a.Status)
	for _, l := range []string{c.cfg.PriorityLabel, "cluster", "namespace", "instance", "job"} {
		if v := a.Labels[l]; v != "" && attrs.String(l) == "" {
			attrs = attrs.Set(l, v)
		}
	}
	attrs = attrs.Set("fingerprint", fp)
	if u := cmp.Or(a.GeneratorURL, a.PanelURL, a.DashboardURL); u != "" {
		attrs = attrs.Set("url", u)
	}
	payload := map[string]any{
		"status": a.Status, "labels": a.Labels, "annotations": a.Annotations, "startsAt": a.StartsAt,
		"fingerprint": fp, "receiver": n.Receiver, "groupKey": n.GroupKey,
	}
	if !a.EndsAt.IsZero() && a.EndsAt.Year() > 1 {
		payload["endsAt"] = a.EndsAt
	}
	for k, v := range map[string]string{"generatorURL": a.GeneratorURL, "externalURL": n.ExternalURL, "silenceURL": a.SilenceURL,
		"dashboardURL": a.DashboardURL, "panelURL": a.PanelURL, "imageURL": a.ImageURL, "valueString": a.ValueString} {
		if v != "" {
			payload[k] = v
		}
	}
	if len(a.Values) > 0 {
		payload["values"] = a.Values
	}
	raw, _ := json.Marshal(payload) // maps of strings, numbers and times always encode
	extra := maps.Clone(a.Labels)
	md := map[string]any{
		connectors.MetaVerifiedBy: verifiedBy,
		reply.MetadataKey:         reply.NewTo(Source, c.cfg.Name, Place{Fingerprint: fp, AlertLabels: labelPairs(a.Labels)}),
	}
	if n.grafana() {
		md["sender"] = "grafana"
	}
	it := connectors.Item{
		Kind:            kind,
		Priority:        prio,
		Summary:         connectors.Truncate(summary, summaryLen),
		Payload:         raw,
		DedupeKey:       fmt.Sprintf("%s:%s:%s", fp, a.Status, a.StartsAt.UTC().Format(time.RFC3339Nano)),
		SourceID:        fp,
		Attributes:      attrs,
		Metadata:        md,
		Fields:          connectors.Fields{Source: Source, Connector: c.cfg.Name, Kind: kind, Extra: extra},
		NetKey:          NetKeyPrefix + fp,
		State:           a.Status,
		RestState:       StateResolved,
		OccurredAt:      occurred,
		WatchResources:  []string{fp},
		DefaultResource: "alertmanager/" + c.cfg.Name,
		DefaultThread:   name + threadScope(a.Labels),
	}
	if a.Status == StateResolved {
		it.Ends = watch.EndClosed
	}
	return it
}

// priority is the priority label's value mapped, medium when it names none.
func (c *connector) priority(labels map[string]string) inbox.Priority {
	if p, ok := c.cfg.Priorities[strings.ToLower(labels[c.cfg.PriorityLabel])]; ok {
		return p
	}
	return inbox.PriorityMedium
}

// scope says where an alert is, for its summary: " (cluster eu1, namespace shop)".
func scope(labels map[string]string) string {
	var parts []string
	for _, l := range []string{"cluster", "namespace", "instance"} {
		if v := labels[l]; v != "" {
			parts = append(parts, l+" "+v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// threadScope is the default thread's part after the alert name: the alert's cluster
// and namespace where it has them, "{cluster=eu1,namespace=shop}".
func threadScope(labels map[string]string) string {
	var parts []string
	for _, l := range []string{"cluster", "namespace"} {
		if v := labels[l]; v != "" {
			parts = append(parts, l+"="+v)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// labelPairs are labels as sorted "name=value" pairs: the place keeps them, and a
// silence's matchers are made of them.
func labelPairs(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, k+"="+labels[k])
	}
	return out
}
