package store

import (
	"context"
	"encoding/json"
	"fmt"
)

// ReloadChannel is the PostgreSQL channel config reloads are announced on: every
// replica re-reads its own config file when another one reloaded.
const ReloadChannel = "signalgate_reload"

type reloadPayload struct {
	Schema string `json:"s"`
	Origin string `json:"o"`
}

// OnReload makes the broker tell h when another replica of this deployment announced a
// config reload, and after each reconnect of its listener (an announcement may have
// been missed meanwhile). h must not block. Call it before Start.
func (b *PGBroker) OnReload(h func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reload = h
}

// AnnounceReload tells the other replicas that this one reloaded its config.
func (b *PGBroker) AnnounceReload(ctx context.Context) error {
	b.mu.Lock()
	raw, _ := json.Marshal(reloadPayload{Schema: b.schema, Origin: b.origin})
	b.mu.Unlock()
	if _, err := b.st.w.ExecContext(ctx, `SELECT pg_notify($1, $2)`, ReloadChannel, string(raw)); err != nil {
		return fmt.Errorf("announce config reload: %w", err)
	}
	return nil
}

// reloaded handles a notification on ReloadChannel: another replica's, of this schema.
func (b *PGBroker) reloaded(payload string) {
	var p reloadPayload
	if json.Unmarshal([]byte(payload), &p) != nil || p.Origin == b.origin {
		return
	}
	b.mu.Lock()
	h, ours := b.reload, p.Schema == b.schema
	b.mu.Unlock()
	if h != nil && ours {
		h()
	}
}

// reloadMissed tells the reload hook after a reconnect.
func (b *PGBroker) reloadMissed() {
	b.mu.Lock()
	h := b.reload
	b.mu.Unlock()
	if h != nil {
		h()
	}
}
