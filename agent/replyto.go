package agent

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// MetaReplyTo is the record metadata key of where an answer goes (reply.MetadataKey).
// Only the gateway's connectors write it, at ingest, from what they verified: the agent
// API refuses a notification whose metadata carries it, a generic sender's is dropped.
const MetaReplyTo = "replyTo"

// ReplyProvenance says, for each source a replyTo may name (the connector kind that
// posts the answer), which verified_by values vouch for it: the provenance its own
// connectors stamp on what they verified (a GitHub webhook signature, a Slack request
// signature or Socket Mode, an IMAP login). A record with any other provenance (an
// agent's token, a generic sender, another kind, the gateway itself) names no place
// answers go, whatever its metadata says. The table of integration kinds builds it; the
// zero value vouches for nothing.
type ReplyProvenance map[string][]string

// Vouches reports whether a record verified by verifiedBy may name a place of source.
func (p ReplyProvenance) Vouches(source, verifiedBy string) bool {
	return source != "" && verifiedBy != "" && slices.Contains(p[source], verifiedBy)
}

// Trusted reports whether record metadata md carries a replyTo that p vouches for.
func (p ReplyProvenance) Trusted(md map[string]any) bool {
	v := md[MetaReplyTo]
	if v == nil {
		return false
	}
	by, _ := md[MetaVerifiedBy].(string)
	return p.Vouches(replyToSource(v), by)
}

// ReplyToOf is metadata.replyTo of the newest of rs whose replyTo p vouches for (nil:
// none has one).
func (p ReplyProvenance) ReplyToOf(rs []inbox.Record) any {
	var out any
	var at time.Time
	for _, r := range rs {
		if p.Trusted(r.Metadata) && (out == nil || !r.CreatedAt.Before(at)) {
			out, at = r.Metadata[MetaReplyTo], r.CreatedAt
		}
	}
	return out
}

// replyToSource is the source a replyTo value names, as stored (a decoded JSON object)
// or as a connector put it (reply.To); "" when it names none.
func replyToSource(v any) string {
	if m, ok := v.(map[string]any); ok {
		s, _ := m["source"].(string)
		return s
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var t struct {
		Source string `json:"source"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return ""
	}
	return t.Source
}
