package agent

import (
	"time"

	"github.com/signalgate/signalgate/inbox"
)

// ThreadFilter selects threads, most recently active first. Zero fields match all.
type ThreadFilter struct {
	Agent    string
	Resource string
	Thread   string
	Presence inbox.Presence // active or idle
	Pending  bool           // only threads with pending records
	Limit    int
	Cursor   string
}

// Thread is one thread with its presence and inbox depth.
type Thread struct {
	inbox.ThreadKey
	Presence  inbox.Presence `json:"presence"`
	ActiveRun *ActiveRun     `json:"activeRun,omitempty"`
	Pending   PendingCounts  `json:"pending"`
	Failed    int            `json:"failed"`
	LastSeq   int64          `json:"lastSeq"`
	CreatedAt time.Time      `json:"createdAt"`
	UpdatedAt time.Time      `json:"updatedAt"`
}

// ActiveRun is the run that makes a thread active.
type ActiveRun struct {
	RunID      string    `json:"runId"`
	Origin     string    `json:"origin"`
	Since      time.Time `json:"since"`
	LeaseUntil time.Time `json:"leaseUntil"`
}

// PendingCounts counts a thread's pending records per priority.
type PendingCounts struct {
	Urgent int `json:"urgent"`
	High   int `json:"high"`
	Medium int `json:"medium"`
	Low    int `json:"low"`
	Total  int `json:"total"`
}

// WakeState is a thread's wake accounting as explain shows it.
type WakeState struct {
	// Wakes are the logged wake times (kept only while the agent has a budget).
	Wakes []time.Time `json:"wakes"`
	// QueuedAt is when the thread began waiting for a wake slot; nil when not waiting.
	QueuedAt *time.Time `json:"queuedAt,omitempty"`
	// OpenWakes counts the agent's runs opened by wakes that are open now.
	OpenWakes int `json:"openWakes"`
}
