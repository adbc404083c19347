// Package secret is the type of every credential in config.yaml. A Secret prints as
// <secret> however it is formatted or marshalled, so a config (or a part of one) can be
// logged or echoed without leaking it, and the gateway finds every credential by its
// type (to redact stored errors) instead of by a list someone must keep up to date.
package secret

// Secret is a credential: a token, password, signing secret or header value.
// Decoding reads it as the plain string; only Reveal (or a string conversion) gives
// the value back.
type Secret string

// Mask is what a Secret prints as.
const Mask = "<secret>"

// Reveal is the value, for the code that signs, verifies or logs in with it.
func (s Secret) Reveal() string { return string(s) }

// String masks the value (fmt's %v and %s use it).
func (s Secret) String() string { return Mask }

// GoString masks the value for %#v.
func (s Secret) GoString() string { return Mask }

// MarshalYAML masks the value.
func (s Secret) MarshalYAML() (any, error) { return Mask, nil }

// MarshalJSON masks the value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + Mask + `"`), nil }

// MarshalText masks the value (used for map keys and by encoders that prefer it).
func (s Secret) MarshalText() ([]byte, error) { return []byte(Mask), nil }

// RevealMap is the values of m (header values, for the request that sends them).
func RevealMap(m map[string]Secret) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = string(v)
	}
	return out
}
