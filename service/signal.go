package service

// signalBuffer bounds the values a test has not read yet; beyond it, Signal drops
// values rather than block the service.
const signalBuffer = 256

// Signal is a point in a service's work that tests wait on (a pass done, a chunk
// handled) instead of sleeping. Its zero value does nothing, which is what runs in
// production; a test calls Init before starting the service, then reads C.
type Signal[T any] struct {
	ch chan T
}

// Init makes Signal record values; call it before the service starts.
func (s *Signal[T]) Init() { s.ch = make(chan T, signalBuffer) }

// Signal records v for a test that called Init, without ever blocking.
func (s *Signal[T]) Signal(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
	}
}

// C yields the recorded values in order; nil (blocking forever) without Init.
func (s *Signal[T]) C() <-chan T { return s.ch }
