package agent

import (
	"fmt"
	"slices"
	"strings"

	"github.com/signalgate/signalgate/inbox"
)

// Busy is a runtime target's busy key: what a signal for a thread its runtime is busy
// with does, by the signal's priority; an unset priority takes Default. The words are
// the target kind's own (LangGraph's multitask strategies, A2A's wait or send).
type Busy struct {
	Urgent  string `yaml:"urgent"`
	High    string `yaml:"high"`
	Medium  string `yaml:"medium"`
	Low     string `yaml:"low"`
	Default string `yaml:"default"`
}

// For is what a signal of priority p does ("" or an unknown priority: Default).
func (b Busy) For(p string) string {
	var s string
	switch inbox.Priority(p) {
	case inbox.PriorityUrgent:
		s = b.Urgent
	case inbox.PriorityHigh:
		s = b.High
	case inbox.PriorityMedium:
		s = b.Medium
	case inbox.PriorityLow:
		s = b.Low
	}
	if s == "" {
		s = b.Default
	}
	return s
}

// ForHandoff is what d's signal does, by the priority its attributes carry (a signal
// without one, e.g. a person's message, takes Default).
func (b Busy) ForHandoff(d Handoff) string { return b.For(d.Signal.Attributes.String("priority")) }

// Check reports each key set to a word not among words, by key relative to the target
// (busy.high: unknown strategy "queue" (want enqueue or interrupt)); what names the words.
func (b Busy) Check(what string, words ...string) []error {
	want := strings.Join(words, ", ")
	if i := strings.LastIndex(want, ", "); i >= 0 {
		want = want[:i] + " or " + want[i+2:]
	}
	var errs []error
	for _, kv := range [][2]string{{"urgent", b.Urgent}, {"high", b.High}, {"medium", b.Medium}, {"low", b.Low}, {"default", b.Default}} {
		if kv[1] != "" && !slices.Contains(words, kv[1]) {
			errs = append(errs, fmt.Errorf("busy.%s: unknown %s %q (want %s)", kv[0], what, kv[1], want))
		}
	}
	return errs
}
