package agent

import (
	"errors"

	"github.com/signalgate/signalgate/inbox"
)

// Behavior is what happens to a signal on acceptance, given the thread's presence.
type Behavior string

// Behaviors. wake opens a run on an idle thread; deliver puts the signal into the
// active run; persist logs it to the thread without waking or interrupting;
// discard drops it.
const (
	BehaviorWake    Behavior = "wake"
	BehaviorDeliver Behavior = "deliver"
	BehaviorPersist Behavior = "persist"
	BehaviorDiscard Behavior = "discard"
)

// IfActive says what to do with a signal when its thread's agent is running.
type IfActive struct {
	Behavior   Behavior         `json:"behavior,omitempty"` // deliver (default), persist or discard
	Attributes inbox.Attributes `json:"attributes,omitempty"`
}

// IfIdle says what to do with a signal when its thread is idle.
type IfIdle struct {
	Behavior   Behavior         `json:"behavior,omitempty"` // wake (default), persist or discard
	Attributes inbox.Attributes `json:"attributes,omitempty"`
	// StreamOptions (Mastra's name) are passed to a target that starts runs itself (Mastra)
	// when the signal wakes the thread.
	StreamOptions map[string]any `json:"streamOptions,omitempty"`
	// RunOptions is the deprecated name of StreamOptions, still accepted.
	RunOptions map[string]any `json:"runOptions,omitempty"`
}

// Stream is the stream options given under either name.
func (i IfIdle) Stream() map[string]any {
	if i.StreamOptions != nil {
		return i.StreamOptions
	}
	return i.RunOptions
}

// Options are a signal's delivery options. The zero value means deliver when
// active, wake when idle.
type Options struct {
	IfActive IfActive `json:"ifActive"`
	IfIdle   IfIdle   `json:"ifIdle"`
}

// WithDefaults fills in the default behaviors.
func (o Options) WithDefaults() Options {
	if o.IfActive.Behavior == "" {
		o.IfActive.Behavior = BehaviorDeliver
	}
	if o.IfIdle.Behavior == "" {
		o.IfIdle.Behavior = BehaviorWake
	}
	return o
}

// Validate rejects unknown behaviors and invalid conditional attributes.
func (o Options) Validate() error {
	var errs []error
	switch o.IfActive.Behavior {
	case "", BehaviorDeliver, BehaviorPersist, BehaviorDiscard:
	default:
		errs = append(errs, invalid(ErrInvalidOptions, "ifActive.behavior: unknown %q (want deliver, persist or discard)", o.IfActive.Behavior))
	}
	switch o.IfIdle.Behavior {
	case "", BehaviorWake, BehaviorPersist, BehaviorDiscard:
	default:
		errs = append(errs, invalid(ErrInvalidOptions, "ifIdle.behavior: unknown %q (want wake, persist or discard)", o.IfIdle.Behavior))
	}
	if _, err := NormalizeAttributes(o.IfActive.Attributes); err != nil {
		errs = append(errs, invalid(ErrInvalidOptions, "ifActive.attributes: %v", err))
	}
	if _, err := NormalizeAttributes(o.IfIdle.Attributes); err != nil {
		errs = append(errs, invalid(ErrInvalidOptions, "ifIdle.attributes: %v", err))
	}
	if o.IfIdle.StreamOptions != nil && o.IfIdle.RunOptions != nil {
		errs = append(errs, invalid(ErrInvalidOptions, "ifIdle: set streamOptions or its deprecated name runOptions, not both"))
	}
	return errors.Join(errs...)
}

// Resolve picks the action for a signal sent with opts to a thread in the given
// presence, and the conditional attributes to merge into it (see Accept). Any
// presence other than active counts as idle. A discarded signal gets no
// attributes since nothing is kept.
func Resolve(opts Options, presence inbox.Presence) (Behavior, inbox.Attributes) {
	opts = opts.WithDefaults()
	action, attrs := opts.IfIdle.Behavior, opts.IfIdle.Attributes
	if presence == inbox.PresenceActive {
		action, attrs = opts.IfActive.Behavior, opts.IfActive.Attributes
	}
	if action == BehaviorDiscard {
		return action, nil
	}
	return action, attrs.Clone()
}
