package agent

import "github.com/signalgate/signalgate/inbox"

// State modes: a snapshot replaces what the agent knew of the lane; a delta
// adds to it.
const (
	StateSnapshot = "snapshot"
	StateDelta    = "delta"
)

// SkipUnchanged is the reason a state signal is skipped.
const SkipUnchanged = "unchanged"

// StateKey names one state lane: a state signal id within a thread.
type StateKey struct {
	Thread inbox.ThreadKey `json:"thread"`
	ID     string          `json:"id"`
}

// StateLane is the last accepted state of a lane.
type StateLane struct {
	Version  int    `json:"version"`
	CacheKey string `json:"cacheKey,omitempty"`
	Mode     string `json:"mode"`
}

// ValidStateMode reports whether mode is snapshot, delta or "" (snapshot).
func ValidStateMode(mode string) bool {
	return mode == "" || mode == StateSnapshot || mode == StateDelta
}

// NextState decides whether a state signal with cacheKey and mode goes out on a
// lane currently at current (nil for a new lane). The same cacheKey and mode as
// the lane's current ones mean the agent already has it: skipped, lane
// unchanged (reason SkipUnchanged). Otherwise the lane moves to the next
// version, starting at 1. An empty cacheKey never matches, so state without a
// cache key always goes out. An empty mode is snapshot.
func NextState(current *StateLane, cacheKey, mode string) (next StateLane, skipped bool) {
	if mode == "" {
		mode = StateSnapshot
	}
	if current == nil {
		return StateLane{Version: 1, CacheKey: cacheKey, Mode: mode}, false
	}
	curMode := current.Mode
	if curMode == "" {
		curMode = StateSnapshot
	}
	if cacheKey != "" && current.CacheKey == cacheKey && curMode == mode {
		return *current, true
	}
	return StateLane{Version: current.Version + 1, CacheKey: cacheKey, Mode: mode}, false
}
