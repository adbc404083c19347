package gateway

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/targets/mastra"
)

// configKeys is every key the config takes, as the config walk sees the structs:
// list entries as "[]", map entries as ".*". The shipped config gives the
// connectors section its kinds.
func configKeys(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../config.yaml")
	require.NoError(t, err)
	cfg, err := ParseConfig("config.yaml", raw, env())
	require.NoError(t, err)
	w := configWalk{listKeys: true}
	w.walk(reflect.ValueOf(cfg).Elem(), nil, "")
	slices.Sort(w.keys)
	return w.keys
}

var docKeyRow = regexp.MustCompile("^\\| `([^`]+)` \\|")

// documentedKeys is the first cell of every row of the reference's key tables.
func documentedKeys(doc string) []string {
	var out []string
	for _, line := range strings.Split(doc, "\n") {
		if m := docKeyRow.FindStringSubmatch(line); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// The configuration reference names every key the config takes, and none it does not:
// a new key without a row, or a row left behind by a removed key, fails here.
func TestConfigurationDocMatchesConfig(t *testing.T) {
	doc, err := os.ReadFile("../docs/configuration.md")
	require.NoError(t, err)
	keys := configKeys(t)
	documented := documentedKeys(string(doc))
	require.NotEmpty(t, documented)

	var missing, unknown, twice []string
	seen := map[string]bool{}
	for _, k := range documented {
		if seen[k] {
			twice = append(twice, k)
		}
		seen[k] = true
		if !slices.Contains(keys, k) {
			unknown = append(unknown, k)
		}
	}
	for _, k := range keys {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	require.Empty(t, missing, "keys the config takes that docs/configuration.md does not list")
	require.Empty(t, unknown, "keys docs/configuration.md lists that the config does not take")
	require.Empty(t, twice, "keys docs/configuration.md lists twice")
}

// The walk that lists keys sees what the structs hold, lists and maps included.
func TestConfigKeysWalkTheStructs(t *testing.T) {
	keys := configKeys(t)
	for _, k := range []string{
		"server.listen", "agents[].target.headers", "agents[].wake_budget.per",
		"connectors.github[].secret", "connectors.email[].mailboxes", "routes[].match.extra",
		"policy.sources.*.action", "policy.rules[].when", "admin.tokens[].scopes",
	} {
		require.Contains(t, keys, k)
	}
	require.NotContains(t, keys, "connectors.github")
}

// The routing page's examples that start at `routes:` load as written.
func TestDocRoutingExamplesLoad(t *testing.T) {
	doc, err := os.ReadFile("../docs/routing.md")
	require.NoError(t, err)
	blocks := 0
	for _, part := range strings.Split(string(doc), "```yaml\n")[1:] {
		block, _, ok := strings.Cut(part, "```")
		require.True(t, ok)
		if !strings.HasPrefix(block, "routes:") {
			continue
		}
		blocks++
		cfg, err := ParseConfig("routing.yaml", []byte(minimal+block), env("CODER_TOKEN", "a-long-enough-token"))
		require.NoError(t, err, block)
		require.NotEmpty(t, cfg.Routes)
	}
	require.GreaterOrEqual(t, blocks, 3)
}

// The targets page's stream options example loads as written and gives both places.
func TestDocStreamOptionsExampleLoads(t *testing.T) {
	doc, err := os.ReadFile("../docs/targets.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "## Stream options")
	require.True(t, ok)
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	require.True(t, ok)
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	cfg, err := ParseConfig("targets.yaml", []byte(block), env("CODER_TOKEN", "a-long-enough-token"))
	require.NoError(t, err)
	require.Equal(t, map[string]any{"model": "fast"}, cfg.Agents[0].Target.Settings.(mastra.Config).StreamOptions["requestContext"])
	require.Equal(t, map[string]any{"model": "careful"}, cfg.Policy.Rules[0].StreamOptions["requestContext"])
}

// The generic connector page's preset and custom scheme examples load as written.
func TestDocGenericExamplesLoad(t *testing.T) {
	doc, err := os.ReadFile("../docs/connectors/generic.md")
	require.NoError(t, err)
	vars := env("CODER_TOKEN", "a-long-enough-token", "STRIPE_WEBHOOK_SECRET", "whsec_test_0123456789abcdef",
		"SVIX_WEBHOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "RESEND_WEBHOOK_SECRET", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		"GITLAB_WEBHOOK_TOKEN", "gitlab-token-0123456789", "FORGE_WEBHOOK_SECRET", "forge-secret-0123456789",
		"LINEAR_WEBHOOK_SECRET", "lin_wh_0123456789abcdef", "SENTRY_CLIENT_SECRET", "sentry-secret-0123456789", "SHOPIFY_CLIENT_SECRET", "shpss_0123456789abcdef",
		"PAGERDUTY_WEBHOOK_SECRET", "pd-secret-0123456789abcdef", "INTERCOM_CLIENT_SECRET", "ic-secret-0123456789abcdef", "VERCEL_WEBHOOK_SECRET", "vc-secret-0123456789abcdef",
		"DISCORD_PUBLIC_KEY", "3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29",
		"TWILIO_AUTH_TOKEN", "0123456789abcdef0123456789abcdef")
	blocks := 0
	for _, part := range strings.Split(string(doc), "```yaml\n")[1:] {
		block, _, ok := strings.Cut(part, "```")
		require.True(t, ok)
		if !strings.Contains(block, "preset:") && !strings.Contains(block, "verify:") {
			continue
		}
		blocks++
		cfg, err := ParseConfig("generic.yaml", []byte(minimal+block), vars)
		require.NoError(t, err, block)
		require.NotEmpty(t, cfg.Connectors.lists["generic"], block)
	}
	require.Equal(t, 2, blocks)
}
