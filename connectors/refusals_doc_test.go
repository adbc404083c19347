package connectors_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors"
)

// TestTroubleshootingQuotesEveryReason: docs/troubleshooting.md quotes each reason a
// refusal can carry exactly as the code writes it.
func TestTroubleshootingQuotesEveryReason(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "troubleshooting.md"))
	require.NoError(t, err)
	doc := strings.Join(strings.Fields(string(raw)), " ") // as rendered: lines joined
	quotes := func(s string) bool { return strings.Contains(doc, "`"+s+"`") }
	for _, r := range connectors.Reasons() {
		assert.True(t, quotes(string(r)), "docs/troubleshooting.md does not quote %q", r)
	}
	assert.True(t, quotes("refused with HTTP 405 (Method Not Allowed)"))
	assert.Contains(t, doc, fmt.Sprintf("keeps its last **%d refusals**", connectors.DefaultRefusalsKept), "the bound the doc states")
	assert.Contains(t, doc, fmt.Sprintf("a reason of at most %d characters", connectors.MaxRefusalReason))
}
