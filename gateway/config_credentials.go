package gateway

import (
	"fmt"
	"strings"

	"github.com/signalgate/signalgate/server"
)

// DevTokenPrefix marks the shipped config's try-it-out tokens. They are public (they are
// in the repository), so they may only answer on a loopback address.
const DevTokenPrefix = "dev-only-"

// credentialProblems checks what no single section can: that publicly known tokens are
// not served beyond this machine, that no two bearer tokens share a value (a token must
// name one caller). Values are never printed, only the keys holding them. The targets'
// own credentials (a signing secret's strength) are their kinds' (targetCredentials).
func (c *Config) credentialProblems() []string {
	type token struct{ key, value string }
	var tokens []token
	for i, t := range c.Admin.Tokens {
		tokens = append(tokens, token{fmt.Sprintf("admin.tokens[%d].token", i), t.Token.Reveal()})
	}
	for i, a := range c.Agents {
		tokens = append(tokens, token{fmt.Sprintf("agents[%d].token", i), a.Token.Reveal()})
	}
	var out []string
	exposed := !server.Loopback(c.Server.Listen)
	seen := map[string]string{}
	for _, t := range tokens {
		if t.value == "" {
			continue
		}
		if exposed && strings.HasPrefix(t.value, DevTokenPrefix) {
			out = append(out, fmt.Sprintf("%s: a %q token is publicly known and server.listen %s is not a loopback address; set a token of your own (e.g. through its environment variable)",
				t.key, DevTokenPrefix, c.Server.Listen))
		}
		if first, dup := seen[t.value]; dup {
			out = append(out, fmt.Sprintf("%s: same value as %s (each token must name one caller)", t.key, first))
			continue
		}
		seen[t.value] = t.key
	}
	return out
}
