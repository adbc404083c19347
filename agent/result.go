package agent

import (
	"errors"
	"fmt"
	"time"
)

// Result is what a target's receiver answered to a delivery it accepted.
type Result struct {
	// Status is the answer's HTTP status, for the attempt log; 0 for a target not
	// reached over HTTP (the stream).
	Status int
}

// DeliveryError is a delivery the target did not accept: the one failure type targets
// return. It tells the dispatcher whether to retry (a failure that may pass also says the
// target is unwell: enough of them mark it down) or to fail the record for good, the HTTP
// status for the attempt log and the receiver's Retry-After. Any other error counts as a
// DeliveryError with only Err set: permanent, no status.
type DeliveryError struct {
	Err        error         // what failed; never holds a credential
	Status     int           // the answer's HTTP status; 0 when no answer came
	Retry      bool          // a later attempt may succeed
	RetryAfter time.Duration // the receiver's hint for the next attempt; 0: none, backoff applies
}

func (e *DeliveryError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("delivery failed (HTTP %d)", e.Status)
	}
	return e.Err.Error()
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// ErrHoldUntilIdle is a target's answer that its runtime takes the signal only once the
// thread is idle (it waits on a person, refuses a run beside the one it runs, or takes no
// message into a working task): the dispatcher sends it again in full when the thread
// turns idle, counting neither an attempt nor a failure of the target.
var ErrHoldUntilIdle = errors.New("the runtime takes the signal once the thread is idle")

// DeliveryFailure reads err (nil: delivered) as the failure it reports, found anywhere in
// err's chain; an error of another type is a permanent failure without a status.
func DeliveryFailure(err error) DeliveryError {
	var de *DeliveryError
	if errors.As(err, &de) {
		return *de
	}
	return DeliveryError{Err: err}
}
