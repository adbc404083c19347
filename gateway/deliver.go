package gateway

import (
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/signalgate/signalgate/connectors"
)

// ConnectorSender is the sender of the connector named name ("acme", or "github/acme"
// when names repeat across kinds): its kind's source, and the deliveries its real
// sender makes, signed with the connector's current secret.
func (c *Config) ConnectorSender(name string, o connectors.SenderOptions) (string, connectors.Sender, error) {
	want, conn, qualified := strings.Cut(name, "/")
	if !qualified {
		want, conn = "", name
	}
	var found []string
	var snd connectors.Sender
	var sndErr error
	c.Connectors.each(func(k integration, l any) {
		if want != "" && k.source() != want {
			return
		}
		s, ok, err := k.sender(l, conn, o)
		if !ok {
			return
		}
		found = append(found, k.source())
		if snd == nil && sndErr == nil {
			snd, sndErr = s, err
			if s == nil && err == nil {
				sndErr = fmt.Errorf("%s connectors receive nothing over HTTP (an email connector reads a mailbox: send a mail to it)", k.source())
			}
		}
	})
	switch {
	case len(found) == 0:
		return "", nil, fmt.Errorf("no connector named %q in connectors (configured: %s)", name, strings.Join(c.connectorNames(), ", "))
	case len(found) > 1:
		return "", nil, fmt.Errorf("connector %q is configured under %s: name one as %s/%s", name, strings.Join(found, " and "), found[0], conn)
	case sndErr != nil:
		return "", nil, fmt.Errorf("connectors.%s %s: %w", found[0], conn, sndErr)
	}
	return found[0], snd, nil
}

// connectorNames lists every connector as source/name.
func (c *Config) connectorNames() []string {
	var out []string
	for _, r := range c.connectorRefs() {
		out = append(out, r.Source+"/"+r.Name)
	}
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// LocalURL is the base URL a client on this machine reaches the gateway at: its
// listen address, with a wildcard host (":8080", "0.0.0.0:8080", "[::]:8080") as
// loopback.
func (c *Config) LocalURL() string {
	host, port, err := net.SplitHostPort(c.Server.Listen)
	if err != nil {
		return "http://" + c.Server.Listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// ReadToken is the value of the first admin token with the read scope ("" when none).
func (c *Config) ReadToken() string {
	for _, t := range c.Admin.Tokens {
		if slices.Contains(t.Scopes, "read") {
			return t.Token.Reveal()
		}
	}
	return ""
}
