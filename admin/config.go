// Package admin is the operator's REST API under /admin/v1.
package admin

import (
	"errors"
	"fmt"
	"slices"

	"github.com/signalgate/signalgate/secret"
)

// Scopes an admin token may hold.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// Config is the `admin:` section of config.yaml.
type Config struct {
	Tokens []Token `yaml:"tokens"`
	// Pprof serves Go's runtime profiles under /admin/v1/debug/pprof/ (write scope).
	Pprof bool `yaml:"pprof"`
}

// Token is one named bearer token with its scopes.
type Token struct {
	Name   string        `yaml:"name"`
	Token  secret.Secret `yaml:"token"`
	Scopes []string      `yaml:"scopes"`
}

// Validate reports problems with key paths relative to `admin`.
func (c Config) Validate() error {
	var errs []error
	names := map[string]bool{}
	for i, t := range c.Tokens {
		p := fmt.Sprintf("tokens[%d]", i)
		if t.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: required", p))
		} else if names[t.Name] {
			errs = append(errs, fmt.Errorf("%s.name: duplicate %q", p, t.Name))
		}
		names[t.Name] = true
		if len(t.Token) < 16 {
			errs = append(errs, fmt.Errorf("%s.token: must be at least 16 characters", p))
		}
		if len(t.Scopes) == 0 {
			errs = append(errs, fmt.Errorf("%s.scopes: required (read, write)", p))
		}
		for _, s := range t.Scopes {
			if s != ScopeRead && s != ScopeWrite {
				errs = append(errs, fmt.Errorf("%s.scopes: unknown scope %q (want read or write)", p, s))
			}
		}
	}
	return errors.Join(errs...)
}

// Has reports whether the token holds scope (write implies read).
func (t Token) Has(scope string) bool {
	return slices.Contains(t.Scopes, scope) || (scope == ScopeRead && slices.Contains(t.Scopes, ScopeWrite))
}
