// Package secret is the type of every credential in config.yaml. A Secret prints as
// <secret> however it is formatted or marshalled, so a config (or a part of one) can be
// logged or echoed without leaking it, and the gateway finds every credential by its
// type (to redact stored errors) instead of by a list someone must keep up to date.
package secret

import "fmt"

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

// MaxRotated is how many secrets a rotation keeps valid at once: the current one and
// the previous one.
const MaxRotated = 2

// Rotated is the secrets a credential accepts, current first: the one under key, or
// the list under key+"s" ([current, previous]) while a rotation overlaps. Problems name
// the keys and never the values; check (optional) judges each secret. Neither given
// yields no secrets and no problem: whether one is required is the caller's to say.
func Rotated(key string, one Secret, many []Secret, check func(Secret) error) ([]Secret, []error) {
	list := key + "s"
	if one != "" && len(many) > 0 {
		return nil, []error{fmt.Errorf("%s, %s: set one or the other (%s: [current, previous] while rotating)", key, list, list)}
	}
	if one != "" {
		if check != nil {
			if err := check(one); err != nil {
				return nil, []error{fmt.Errorf("%s: %w", key, err)}
			}
		}
		return []Secret{one}, nil
	}
	if len(many) > MaxRotated {
		return nil, []error{fmt.Errorf("%s: at most %d (the current secret, then the previous one while rotating); %d given", list, MaxRotated, len(many))}
	}
	var errs []error
	for i, s := range many {
		switch {
		case s == "":
			errs = append(errs, fmt.Errorf("%s[%d]: empty", list, i))
		case check != nil:
			if err := check(s); err != nil {
				errs = append(errs, fmt.Errorf("%s[%d]: %w", list, i, err))
			}
		}
	}
	if len(many) == 2 && many[0] == many[1] && many[0] != "" {
		errs = append(errs, fmt.Errorf("%s[1]: same value as %s[0] (the previous secret must differ from the current one)", list, list))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return many, nil
}

// Slot names a rotated secret's place for the metric that shows when the previous
// one stops being used: "current" or "previous".
func Slot(i int) string {
	if i == 0 {
		return "current"
	}
	return "previous"
}

// Accepted is what Rotated accepts for a validated config: one, else many.
func Accepted(one Secret, many []Secret) []Secret {
	if one != "" {
		return []Secret{one}
	}
	return many
}

// Keys is the values of list as HMAC keys, in order.
func Keys(list []Secret) [][]byte {
	keys := make([][]byte, len(list))
	for i, s := range list {
		keys[i] = []byte(s)
	}
	return keys
}
