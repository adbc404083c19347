package secret_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/signalgate/signalgate/secret"
)

// TestSecretNeverPrints plays a careless caller that formats, logs and marshals a
// config holding a credential: none of them shows the value.
func TestSecretNeverPrints(t *testing.T) {
	type conf struct {
		Name    string                   `yaml:"name" json:"name"`
		Token   secret.Secret            `yaml:"token" json:"token"`
		Headers map[string]secret.Secret `yaml:"headers" json:"headers"`
	}
	c := conf{Name: "acme", Token: "tok-SENTINEL", Headers: map[string]secret.Secret{"Authorization": "Bearer SENTINEL"}}
	var j bytes.Buffer
	enc := json.NewEncoder(&j)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(c))
	y, err := yaml.Marshal(c)
	require.NoError(t, err)
	for _, out := range []string{
		fmt.Sprint(c.Token), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c),
		fmt.Sprintf("%s", c.Token), fmt.Sprintf("%q", c.Token), j.String(), string(y),
	} {
		require.NotContains(t, out, "SENTINEL", out)
		require.Contains(t, out, secret.Mask, out)
	}
	require.Equal(t, "tok-SENTINEL", c.Token.Reveal())
}

// TestSecretDecodes reads a Secret from YAML as the plain value.
func TestSecretDecodes(t *testing.T) {
	var c struct {
		Token secret.Secret `yaml:"token"`
	}
	require.NoError(t, yaml.Unmarshal([]byte("token: abc$1"), &c))
	require.Equal(t, "abc$1", c.Token.Reveal())
}
