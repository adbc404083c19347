package gateway

import (
	"os"
	"testing"
)

// FuzzParseConfig: any bytes give a config or an error, never a panic, and an accepted
// config is valid.
func FuzzParseConfig(f *testing.F) {
	if raw, err := os.ReadFile("../config.yaml"); err == nil {
		f.Add(raw)
	}
	f.Add([]byte(""))
	f.Add([]byte("server: { listen: \"127.0.0.1:0\" }\nstorage: { driver: sqlite, dsn: \":memory:\" }\n"))
	f.Add([]byte("agents: [ { id: coder, token: \"${TOKEN}\", target: { kind: webhook, url: \"http://127.0.0.1:1\" } } ]\n"))
	f.Add([]byte("routes: [ { name: r, match: { source: github, kind: [a, b] }, thread: { agent: x, resource: \"{{.Repo\", thread: t } } ]\n"))
	f.Add([]byte("policy: { rules: [ { match: { source: github }, action: summarize, after: -1h } ] }\n"))
	f.Add([]byte("&a [*a, *a]\n"))
	f.Add([]byte("server: { body_limit: 99999999999999999999GB }\n"))
	f.Add([]byte("connectors: { email: [ { name: e, addr: \"h:1\", mailboxes: [~], poll_interval: 1ns } ] }\n"))
	lookup := func(name string) (string, bool) {
		if name == "UNSET" {
			return "", false
		}
		return "value-" + name, true
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg, err := ParseConfig("fuzz.yaml", raw, lookup)
		if err != nil {
			return
		}
		if problems := cfg.Validate(); len(problems) > 0 {
			t.Fatalf("accepted an invalid config: %v", problems)
		}
	})
}
