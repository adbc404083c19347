package generic

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/signalgate/signalgate/connectors"
	"github.com/signalgate/signalgate/inbox"
)

// summaryKeys are the data fields a Standard Webhooks sender's summary is taken
// from, first non-empty one wins.
func summaryKeys() []string { return []string{"summary", "title", "subject", "message", "description"} }

// envelope reads the Standard Webhooks canonical payload {type, timestamp, data}:
// kind = type, payload = data, dedupeKey = the delivery's webhook-id, route fields
// from data's scalars. Other top-level fields are the sender's metadata and are
// left alone: the spec lets senders add them.
func (c *connector) envelope(obj map[string]any, id string) (connectors.Item, error) {
	kind := c.cfg.DefaultKind
	if t, ok := obj["type"]; ok && t != nil {
		s, isString := t.(string)
		if !isString {
			return connectors.Item{}, errors.New("type: want a string")
		}
		kind = cmp.Or(strings.TrimSpace(s), kind)
	}
	if kind == "" {
		return connectors.Item{}, errors.New("type: required (the body has neither kind nor type, and the connector has no default_kind)")
	}
	data, _ := obj["data"].(map[string]any)
	summary := ""
	for _, k := range summaryKeys() {
		if s, ok := data[k].(string); ok {
			if summary = connectors.Truncate(connectors.PlainText(s), SummaryLen); summary != "" {
				break
			}
		}
	}
	if summary == "" {
		summary = fmt.Sprintf("%s sent %s", c.cfg.Name, kind)
	}
	scalars := map[string]string{}
	for k, v := range data {
		if s, err := scalarString(v); err == nil && v != nil {
			scalars[k] = s
		}
	}
	it := connectors.Item{
		Kind:       kind,
		Priority:   c.defaultPriority(),
		Summary:    summary,
		DedupeKey:  id,
		Attributes: inbox.Attributes{},
		Fields:     fieldsFromScalars(scalars),
	}
	if v, ok := obj["data"]; ok && v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return connectors.Item{}, fmt.Errorf("data: %w", err)
		}
		it.Payload = b
	}
	it.Message = &connectors.Message{Name: cmp.Or(it.Fields.Author, c.cfg.Name), From: Source, Text: summary}
	return it, nil
}
