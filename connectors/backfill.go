package connectors

import (
	"encoding/json"
	"fmt"
	"time"
)

// StateBackfillPass is the connector-state key ("source/name") of a connector's last
// backfill pass (a JSON BackfillPass).
const StateBackfillPass = "backfill_pass"

// BackfillHeader is the header an event backfill read from a provider's API is stored
// with: its provenance (verified_by). A connector never keeps it from a request, so an
// event that has it came by backfill.
const BackfillHeader = "Signalgate-Verified-By"

// BackfillPass is what a connector's last backfill pass did: what it read from the
// provider's API and how far behind the senders it found the gateway. check, the
// console and the admin API show it.
type BackfillPass struct {
	At time.Time `json:"at"`
	// LagSeconds is the longest a delivery this pass ingested had waited since the
	// provider tried (or made) it; 0 when it found nothing missing.
	LagSeconds float64 `json:"lagSeconds"`
	Ingested   int     `json:"ingested"`
	Duplicate  int     `json:"duplicate"`
	Ignored    int     `json:"ignored"`
	Requests   int     `json:"requests"`
	// Busy counts what another replica was reading during the pass.
	Busy int `json:"busy,omitempty"`
	// RateLimitedUntil is set when the provider's rate limit stopped the pass.
	RateLimitedUntil *time.Time `json:"rateLimitedUntil,omitempty"`
	// More: the pass's request bound cut it short; the next runs at once.
	More bool `json:"more,omitempty"`
	// Error is why the pass failed (credentials redacted).
	Error string `json:"error,omitempty"`
}

// Lag is LagSeconds as a duration.
func (p BackfillPass) Lag() time.Duration { return time.Duration(p.LagSeconds * float64(time.Second)) }

// ReadBackfillPass reads the last pass from a connector's state; nil before the first.
func ReadBackfillPass(states map[string]string) (*BackfillPass, error) {
	v, ok := states[StateBackfillPass]
	if !ok {
		return nil, nil
	}
	var p BackfillPass
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return nil, fmt.Errorf("read the last backfill pass: %w", err)
	}
	return &p, nil
}
