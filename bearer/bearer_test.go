package bearer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/bearer"
)

// A careless configuration (an empty token) and a careless client (no scheme, another
// scheme, a blank token) never authenticate; the scheme is matched in any case and the
// token with surrounding spaces ignored.
func TestTableFromHeader(t *testing.T) {
	var tbl bearer.Table[string]
	tbl.Add("", "tokenless")
	tbl.Add("coder-token-0123456789", "coder")
	tbl.Add("support-token-0123456789", "support")
	require.Equal(t, 2, tbl.Len(), "an empty token is never registered")

	for _, h := range []string{"", "Bearer", "Bearer ", "Bearer \t ", `Bearer ""`, "Basic coder-token-0123456789",
		"coder-token-0123456789", "Bearer coder-token-012345678", "Bearer coder-token-0123456789x"} {
		_, ok := tbl.FromHeader(h)
		require.False(t, ok, "header %q", h)
	}
	for h, want := range map[string]string{
		"Bearer coder-token-0123456789":       "coder",
		"bearer support-token-0123456789":     "support",
		"  Bearer  coder-token-0123456789  ":  "coder",
		"BEARER \tsupport-token-0123456789\t": "support",
	} {
		got, ok := tbl.FromHeader(h)
		require.True(t, ok, "header %q", h)
		require.Equal(t, want, got, "header %q", h)
	}
	_, ok := tbl.Lookup("   ")
	require.False(t, ok)
	got, ok := tbl.Lookup(" coder-token-0123456789 ")
	require.True(t, ok)
	require.Equal(t, "coder", got)
}
