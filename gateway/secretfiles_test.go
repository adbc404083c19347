package gateway

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// everySecret is a config setting every secret key the config takes, each value a
// @@name@@ placeholder (a single secret and its rotated list are set on two entries).
const everySecret = `
server: { listen: "127.0.0.1:0" }
storage: { driver: sqlite, dsn: ":memory:" }
admin:
  tokens:
    - name: ops
      token: "@@admin@@"
      scopes: [read, write]
console:
  session_key: "@@console@@"
telemetry:
  traces:
    endpoint: http://127.0.0.1:4318
    headers: { x-api-key: "@@otlp@@" }
agents:
  - id: coder
    token: "@@coder@@"
    target:
      kind: webhook
      url: http://127.0.0.1:9/hook
      secret: "@@hook@@"
      headers: { Authorization: "@@hookauth@@" }
  - id: rotating
    token: "@@rotating@@"
    target:
      kind: webhook
      url: http://127.0.0.1:9/hook
      secrets: ["@@hooknew@@", "@@hookold@@"]
  - id: support
    token: "@@support@@"
    target:
      kind: mastra
      url: http://127.0.0.1:4111
      agent_id: supportAgent
      headers: { Authorization: "@@mastraauth@@" }
  - id: triage
    token: "@@triage@@"
    target:
      kind: langgraph
      url: http://127.0.0.1:2024
      assistant_id: echo
      headers: { x-api-key: "@@langgraphkey@@" }
      callback_url: http://127.0.0.1:8080
      callback_token: "@@langgraphcallback@@"
  - id: hostedopenai
    target:
      kind: openai-agents
      api_key: "@@openaikey@@"
      agent_id: agent_1
      environment_id: env_1
      webhook_secret: "@@hookopenai@@"
  - id: hostedclaude
    target:
      kind: claude-agents
      api_key: "@@claudekey@@"
      agent_id: agent_2
      environment_id: env_2
      webhook_secret: "@@hookclaude@@"
connectors:
  github:
    - name: acme
      secret: "@@github@@"
      token: "@@githubtoken@@"
    - name: rotating
      secrets: ["@@githubnew@@", "@@githubold@@"]
      app:
        id: 1
        installation_id: 2
        private_key: "@@appkey@@"
  slack:
    - name: acme
      signing_secret: "@@slack@@"
      bot_token: "@@slackbot@@"
    - name: socket
      signing_secrets: ["@@slacknew@@", "@@slackold@@"]
      socket_mode: true
      app_token: "@@slackapp@@"
  email:
    - name: support
      addr: "127.0.0.1:993"
      username: gw@example.com
      password: "@@imap@@"
      mailboxes: [INBOX]
      smtp:
        addr: "127.0.0.1:465"
        username: gw
        password: "@@smtp@@"
  generic:
    - name: billing
      secret: "@@generic@@"
    - name: shop
      secrets: ["@@genericnew@@", "@@genericold@@"]
  alertmanager:
    - name: prod
      bearer_token: "@@ambearer@@"
      api_url: http://127.0.0.1:9093
      api_token: "@@amapi@@"
    - name: grafana
      basic_auth:
        username: grafana
        password: "@@ambasic@@"
      grafana_hmac:
        secret: "@@grafanahmac@@"
  linear:
    - name: acme
      webhook_secret: "@@linear@@"
      access_token: "@@linearoauth@@"
    - name: rotating
      webhook_secrets: ["@@linearnew@@", "@@linearold@@"]
      api_key: "@@linearkey@@"
`

var placeholder = regexp.MustCompile(`"@@([a-z]+)@@"`)

// everySecretValues are values each secret's validation accepts.
func everySecretValues(t *testing.T) map[string]string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	v := map[string]string{"appkey": pemKey, "slackbot": "xoxb-file-SENTINEL", "slackapp": "xapp-file-SENTINEL"}
	for _, m := range placeholder.FindAllStringSubmatch(everySecret, -1) {
		name := m[1]
		if _, ok := v[name]; ok {
			continue
		}
		if strings.HasPrefix(name, "generic") || (strings.HasPrefix(name, "hook") && name != "hookauth") {
			v[name] = "whsec_" + base64.StdEncoding.EncodeToString([]byte(name+"-SENTINEL-0123456789"))
		} else {
			v[name] = name + "-secret-value-SENTINEL-0123456789abcdef"
		}
	}
	return v
}

// Every secret key takes `<key>_file`: the same config with every secret in a file
// holds the same secrets, read with one trailing newline trimmed, and the config's
// every secret key (as the config walk lists them) is among those the test sets.
func TestEverySecretTakesAFile(t *testing.T) {
	values := everySecretValues(t)
	inline := placeholder.ReplaceAllStringFunc(everySecret, func(p string) string {
		return `"` + strings.ReplaceAll(values[placeholder.FindStringSubmatch(p)[1]], "\n", `\n`) + `"`
	})
	want, err := ParseConfig("inline.yaml", []byte(inline), noEnv)
	require.NoError(t, err)

	dir := t.TempDir()
	keyLine := regexp.MustCompile(`(?m)^(\s*(?:- )?)([a-z_]+): (.*@@.*)$`)
	filed := keyLine.ReplaceAllStringFunc(everySecret, func(line string) string {
		m := keyLine.FindStringSubmatch(line)
		value := placeholder.ReplaceAllStringFunc(m[3], func(p string) string {
			name := placeholder.FindStringSubmatch(p)[1]
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(values[name]+"\n"), 0o600))
			return name // relative to the config file's directory
		})
		return m[1] + m[2] + "_file: " + value
	})
	require.NotContains(t, filed, "@@")
	path := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(filed), 0o600))
	got, err := LoadConfig(path, noEnv)
	require.NoError(t, err)
	wantSecrets, gotSecrets := want.Secrets(), got.Secrets()
	slices.Sort(wantSecrets)
	slices.Sort(gotSecrets)
	require.Len(t, wantSecrets, len(values))
	require.Equal(t, wantSecrets, gotSecrets)

	// Every secret key of the config is one the test sets.
	w := configWalk{listKeys: true}
	w.walk(reflect.ValueOf(got).Elem(), nil, "")
	set := map[string]bool{}
	for _, m := range keyLine.FindAllStringSubmatch(everySecret, -1) {
		set[m[2]] = true
	}
	require.NotEmpty(t, w.secretRoots)
	for _, r := range w.secretRoots {
		require.True(t, set[r.key], "%s: a secret key the test does not set", r.path)
	}
}

// A secret file's problems name the key and the path, never the content; a secret set
// both ways is refused naming both keys.
func TestSecretFileProblems(t *testing.T) {
	dir := t.TempDir()
	const content = "whsec_not-base64-SENTINEL-CONTENT!!"
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte(content+"\n"), 0o600))
	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, []byte("\n"), 0o600))
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, []byte(strings.Repeat("SENTINEL-CONTENT", 5000)), 0o600))
	missing := filepath.Join(dir, "missing")
	cfg := minimal + `
connectors:
  generic:
    - { name: a, secret_file: ` + bad + ` }
    - { name: b, secret_file: ` + missing + ` }
    - { name: c, secret_file: ` + empty + ` }
    - { name: d, secret_file: ` + big + ` }
    - { name: e, secret: "` + genericSecret() + `", secret_file: ` + bad + ` }
    - { name: f, secrets_file: ` + bad + ` }
`
	got := problems(t, cfg, env("CODER_TOKEN", "a-long-enough-token"))
	all := strings.Join(got, "\n")
	require.NotContains(t, all, "SENTINEL-CONTENT", "a file's content is never echoed")
	require.Contains(t, all, "connectors.generic[0].secret: ", "the content is judged as the secret it is")
	require.Contains(t, all, "connectors.generic[1].secret_file: read secret file: open "+missing+": no such file or directory")
	require.Contains(t, all, "connectors.generic[2].secret_file: secret file "+empty+" is empty")
	require.Contains(t, all, "connectors.generic[3].secret_file: secret file "+big+": larger than 64 KiB")
	require.Contains(t, all, "connectors.generic[4].secret, connectors.generic[4].secret_file: set one or the other")
	require.Contains(t, all, "connectors.generic[5].secrets_file: want a list of file paths")
	for _, i := range []string{"1", "2", "3", "4"} {
		require.NotContains(t, all, "connectors.generic["+i+"].secret: ", "a file's problem is not reported again as a missing secret")
	}
	// A key that is not a secret's takes no _file.
	require.Equal(t, []string{"server.listen_file: unknown key (line 5)"},
		problems(t, minimal+"server: { listen_file: /etc/hostname }\n", env("CODER_TOKEN", "a-long-enough-token")))
}

// A reload reads the secret files again: once the file holds a new secret, a delivery
// signed with it is accepted and one signed with the old secret refused, the config
// file unchanged.
func TestReloadRereadsSecretFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	secretPath := filepath.Join(dir, "billing-secret")
	require.NoError(t, os.WriteFile(secretPath, []byte(billingSecret+"\n"), 0o600))
	writeReloadConfig(t, path, sqliteStorage(dir), strings.Replace(billingRoutedTo("SECRET", "invoices", ""),
		`secret: "SECRET"`, "secret_file: billing-secret", 1))
	m := startReloadable(t, path)
	require.Equal(t, http.StatusOK, postSigned(t, m, billingSecret, "msg_file_1", []byte(`{"kind":"a","summary":"from the file"}`)))

	require.NoError(t, os.WriteFile(secretPath, []byte(reloadSecret+"\n"), 0o600))
	code, body := postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, <-m.TestSignals.Reloaded.C())
	require.Equal(t, http.StatusOK, postSigned(t, m, reloadSecret, "msg_file_2", []byte(`{"kind":"a","summary":"new secret"}`)))
	require.Equal(t, http.StatusUnauthorized, postSigned(t, m, billingSecret, "msg_file_3", []byte(`{"kind":"a","summary":"old secret"}`)))

	// A file the reload cannot read: refused, naming the key and the path; the running
	// secret stays.
	require.NoError(t, os.WriteFile(secretPath, nil, 0o600))
	code, body = postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "connectors.generic[0].secret_file: secret file "+secretPath+" is empty")
	require.Error(t, <-m.TestSignals.Reloaded.C())
	require.Equal(t, http.StatusOK, postSigned(t, m, reloadSecret, "msg_file_4", []byte(`{"kind":"a","summary":"still in force"}`)))
}

// A variable a reloaded file names but the process does not have cannot be set from
// outside it: the refusal says to restart, or to use the key's _file form.
func TestReloadUnsetVariableAdvice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo(billingSecret, "invoices", ""))
	m := startReloadable(t, path)

	writeReloadConfig(t, path, sqliteStorage(dir), billingRoutedTo("${BILLING_WEBHOOK_SECRET}", `"${BILLING_THREAD}"`, ""))
	code, body := postReload(t, m, reloadOpsToken)
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Contains(t, body, "connectors.generic[0].secret: environment variable BILLING_WEBHOOK_SECRET is not set "+
		"(the running gateway keeps the environment it started with: restart to pick up new environment variables, "+
		"or use secret_file (a file read at every reload))")
	require.Contains(t, body, "routes[0].thread.thread: environment variable BILLING_THREAD is not set "+
		"(the running gateway keeps the environment it started with: restart to pick up new environment variables)")
	require.Error(t, <-m.TestSignals.Reloaded.C())

	// At start the problem is only the missing variable.
	_, err := LoadConfig(path, noEnv)
	var ce *ConfigError
	require.True(t, errors.As(err, &ce))
	require.Contains(t, ce.Problems, "connectors.generic[0].secret: environment variable BILLING_WEBHOOK_SECRET is not set")
}
