package connectors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A thread template renders what the sender wrote. Whatever is routed must be an id the
// agent API accepts: control characters become spaces.
func TestRouteThreadIDsAreAddressable(t *testing.T) {
	r, err := NewRouter(decodeRoutes(t, `
routes:
  - name: customers
    match: { source: generic }
    thread: { agent: coder, resource: "{{index .Extra \"region\"}}", thread: "{{index .Extra \"customer\"}}" }
`), []string{"coder"})
	require.NoError(t, err)
	it := Item{Kind: "invoice", Summary: "s", Fields: Fields{Source: "generic",
		Extra: map[string]string{"customer": "ACME Corp\nLondon office", "region": "eu\r\n\x00west"}}}
	ns, errs := r.Route([]Item{it})
	require.Empty(t, errs)
	require.Len(t, ns, 1)
	assert.Equal(t, "ACME Corp London office", ns[0].Thread.Thread)
	assert.Equal(t, "eu west", ns[0].Thread.Resource)

}
