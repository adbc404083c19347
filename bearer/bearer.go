// Package bearer is the table of configured bearer tokens an API authenticates its
// callers against (the agent API and MCP by agent, the admin API and console by admin
// token).
package bearer

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
)

// Table maps configured tokens to their holders. Only digests are kept, and every
// lookup compares every digest in constant time, so timing reveals neither which
// holder matched nor how close a guess came.
type Table[H any] struct {
	entries []entry[H]
}

type entry[H any] struct {
	holder H
	sum    [sha256.Size]byte
}

// Add registers token for holder. An empty token is not registered: nothing a caller
// presents may match it.
func (t *Table[H]) Add(token string, holder H) {
	if token == "" {
		return
	}
	t.entries = append(t.entries, entry[H]{holder: holder, sum: sha256.Sum256([]byte(token))})
}

// Len is the number of registered tokens.
func (t *Table[H]) Len() int { return len(t.entries) }

// Lookup finds the holder of the raw token (surrounding spaces ignored); a blank token
// matches nothing.
func (t *Table[H]) Lookup(raw string) (H, bool) {
	var found H
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return found, false
	}
	sum := sha256.Sum256([]byte(raw))
	ok := false
	for _, e := range t.entries {
		if subtle.ConstantTimeCompare(sum[:], e.sum[:]) == 1 {
			found, ok = e.holder, true
		}
	}
	return found, ok
}

// FromHeader finds the holder of the token an Authorization header presents
// ("Bearer <token>", the scheme in any case).
func (t *Table[H]) FromHeader(header string) (H, bool) {
	scheme, raw, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		var none H
		return none, false
	}
	return t.Lookup(raw)
}
