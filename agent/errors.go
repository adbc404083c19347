package agent

import "fmt"

// ErrorKind says what kind of refusal an Error is; each front (the agent API, MCP)
// answers it in its own terms.
type ErrorKind int

// Kinds of refusal.
const (
	KindInvalid         ErrorKind = iota + 1 // the request is malformed or breaks a rule
	KindUnauthenticated                      // no or an unknown token
	KindForbidden                            // a known caller without the right
	KindNotFound                             // the thing addressed does not exist
	KindConflict                             // the state or an earlier request forbids it
	KindTooLarge                             // over a size bound
)

// Error is an operation's refusal: its kind, a stable code, and a message the caller
// may read.
type Error struct {
	Kind    ErrorKind
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// NewError builds an Error.
func NewError(kind ErrorKind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

func invalidf(format string, args ...any) *Error {
	return NewError(KindInvalid, "bad_request", format, args...)
}

func notFoundf(format string, args ...any) *Error {
	return NewError(KindNotFound, "not_found", format, args...)
}

func tooLargef(format string, args ...any) *Error {
	return NewError(KindTooLarge, "payload_too_large", format, args...)
}

// Unauthenticated carries no detail on purpose: it must not help a forger.
func Unauthenticated() *Error {
	return NewError(KindUnauthenticated, "unauthorized", "missing or invalid credentials")
}
