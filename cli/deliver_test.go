package cli

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/connectors/generic"
)

const (
	deliverGitHubSecret = "github-webhook-secret-0123456789"
	deliverSlackSecret  = "slack-signing-secret-0123456789"
)

// discordSeed is the seed of the test's Discord key pair: the connector holds its
// public half, deliver signs with it.
var discordSeed = bytes.Repeat([]byte{7}, ed25519.SeedSize)

// deliverConfig has a GitHub and a Slack connector named acme, a Standard Webhooks
// connector billing and one connector per generic preset (p-<preset>), each routed.
func deliverConfig(githubSecret string) string {
	var presets strings.Builder
	for _, p := range generic.Presets() {
		secret := billingSecret
		if p == "discord" {
			secret = hex.EncodeToString(ed25519.NewKeyFromSeed(discordSeed).Public().(ed25519.PublicKey))
		}
		fmt.Fprintf(&presets, "    - { name: p-%s, preset: %s, secret: %q }\n", p, p, secret)
	}
	return `
admin: { tokens: [ { name: ops, token: "` + cliAdminToken + `", scopes: [read, write] } ] }
connectors:
  github: [ { name: acme, secret: "` + githubSecret + `" } ]
  slack: [ { name: acme, signing_secret: "` + deliverSlackSecret + `", bot_user_id: U0BOT } ]
  generic:
    - { name: billing, secret: "` + billingSecret + `" }
` + presets.String() + `
routes:
  - name: ci
    match: { source: github, kind: [ci-failure, ci-recovered, ci-passed] }
    thread: { agent: coder, resource: "{{.Repo}}", thread: "{{.Repo}}#{{.Number}}" }
  - { name: dms, match: { source: slack }, thread: { agent: coder, resource: slack, thread: "{{.Channel}}" } }
  - { name: hooks, match: { source: generic }, thread: { agent: coder, resource: "{{.Connector}}", thread: samples } }
`
}

// recordLine is deliver's line for a record the event made.
var recordLine = regexp.MustCompile(`(?m)^record:  \S+ on (\S+) \(route (\S+)\): (\S+),`)

// TestDeliverThroughEveryConnector runs gateway deliver against a real gateway (in
// process, SQLite): a GitHub check_run completed overridden to a failure, a Slack DM,
// a Standard Webhooks body and every sample of every generic preset are signed as
// their senders sign, accepted, routed, and deliver prints the record and decision.
func TestDeliverThroughEveryConnector(t *testing.T) {
	dir := t.TempDir()
	m, path := startMainAt(t, dir, deliverConfig(deliverGitHubSecret))
	base := "http://" + m.Addr().String()
	env := map[string]string{envURL: base, envSigningKey: hex.EncodeToString(discordSeed)}
	deliver := func(t *testing.T, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := runCLI(t, env, append([]string{"deliver", "--config", path}, args...)...)
		require.Equal(t, exitOK, code, "%v\n%s%s", args, out, errOut)
		return out, errOut
	}
	routed := func(t *testing.T, out, thread, route, kind string) {
		t.Helper()
		m := recordLine.FindStringSubmatch(out)
		require.NotNil(t, m, out)
		assert.Equal(t, []string{thread, route, kind}, m[1:], out)
		assert.Regexp(t, `(?m)^event:   \S+ \S+ routed$`, out)
		assert.Contains(t, out, "         decision: ")
	}

	out, _ := deliver(t, "--connector", "github/acme", "--event", "check_run", "--action", "completed", "--set", "check_run.conclusion=failure")
	assert.Contains(t, out, "answer:  200 OK")
	routed(t, out, "coder/Codertocat/Hello-World/Codertocat/Hello-World#2", "ci", "ci-failure")

	out, _ = deliver(t, "--connector", "slack/acme", "--event", "dm")
	routed(t, out, "coder/slack/D024BE91L", "dms", "dm")
	out, _ = deliver(t, "--connector", "slack/acme", "--event", "mention")
	routed(t, out, "coder/slack/C0LAN2Q65", "dms", "mention")

	out, _ = deliver(t, "--connector", "billing")
	routed(t, out, "coder/billing/samples", "hooks", "example.event")

	for _, p := range generic.Presets() {
		t.Run(p, func(t *testing.T) {
			list, _ := deliver(t, "--connector", "p-"+p, "--list")
			names := regexp.MustCompile(`(?m)^(\S+)\s`).FindAllStringSubmatch(list, -1)
			require.NotEmpty(t, names, "preset %s has no documented sample", p)
			for _, n := range names {
				out, _ := deliver(t, "--connector", "p-"+p, "--event", n[1])
				m := recordLine.FindStringSubmatch(out)
				require.NotNil(t, m, "%s %s:\n%s", p, n[1], out)
				assert.Equal(t, "coder/p-"+p+"/samples", m[1], out)
				assert.Regexp(t, `(?m)^event:   \S+ .*routed`, out)
			}
		})
	}

	// Delivering the same GitHub example again is a redelivery (GitHub signs no
	// timestamp, so the body is the delivery), and deliver says how to send anew.
	out, _ = deliver(t, "--connector", "github/acme", "--event", "check_run", "--action", "completed")
	assert.Contains(t, out, "was already stored (a redelivery)")
	out, _ = deliver(t, "--connector", "github/acme", "--event", "check_run", "--action", "completed", "--set", "check_run.id=7")
	assert.Contains(t, out, "routed")
}

// A gateway holding another secret refuses the delivery, and deliver says what to
// check; bad --set paths and syntax, unknown samples and ambiguous names are errors
// naming what is wrong, before anything is sent.
func TestDeliverRefusalsAndErrors(t *testing.T) {
	dir := t.TempDir()
	m, _ := startMainAt(t, dir, deliverConfig(deliverGitHubSecret))
	env := map[string]string{envURL: "http://" + m.Addr().String()}
	other := writeConfig(t, t.TempDir(), deliverConfig("another-secret-of-the-sender-0123"))
	code, out, errOut := runCLI(t, env, "deliver", "--config", other, "--connector", "github/acme", "--event", "ping")
	require.Equal(t, exitFail, code, out+errOut)
	assert.Contains(t, out, "answer:  401 Unauthorized")
	assert.Contains(t, out, "reason:  signature does not match (the connector's refusal log)")
	assert.Contains(t, errOut, "gateway deliver: the gateway refused the signature: is the secret in config the one deliver used?")

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--connector", "github/acme", "--event", "check_run", "--action", "completed", "--set", "check_run.conclusio=failure"},
			"gateway deliver: --set check_run.conclusio=failure: check_run.conclusio: no such field in the body (check_run has id, "},
		{[]string{"--connector", "github/acme", "--event", "check_run", "--action", "completed", "--set", "check_run.conclusion"},
			"gateway deliver: --set check_run.conclusion: want path=value"},
		{[]string{"--connector", "github/acme", "--event", "check_run", "--action", "completed", "--set", "check_run.*=x"},
			"wildcards and queries are not allowed"},
		{[]string{"--connector", "p-twilio", "--set", "Boddy=hi"}, "--set Boddy=hi: Boddy: no such field in the form (it has "},
		{[]string{"--connector", "github/acme", "--event", "check_run"}, "check_run has actions (completed, created, requested_action, rerequested): name one"},
		{[]string{"--connector", "github/acme"}, "--event: name the event"},
		{[]string{"--connector", "slack/acme", "--event", "reaction"}, `no such sample "reaction" (have dm, mention)`},
		{[]string{"--connector", "acme", "--event", "ping"}, `connector "acme" is configured under github and slack: name one as github/acme`},
		{[]string{"--connector", "nope"}, `no connector named "nope"`},
		{[]string{"--connector", "p-discord"}, "give the matching private key"},
		{[]string{"--event", "ping"}, "--connector: required"},
	} {
		code, _, errOut := runCLI(t, env, append([]string{"deliver", "--config", other}, c.args...)...)
		assert.Equal(t, exitConfig, code, c.args)
		assert.Contains(t, errOut, c.want, c.args)
	}

	// --dry-run prints the signed request and posts nothing.
	code, out, errOut = runCLI(t, env, "deliver", "--config", other, "--connector", "github/acme", "--event", "ping", "--dry-run")
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `(?m)^X-Hub-Signature-256: sha256=[0-9a-f]{64}$`, out)
	assert.Regexp(t, `(?m)^X-Github-Event: ping$`, out)
	assert.Contains(t, out, "POST http://"+m.Addr().String()+"/webhooks/github/acme\n")
}
