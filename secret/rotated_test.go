package secret_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/secret"
)

// TestRotated: one secret or a list of two, never both, never more, never an empty or
// repeated entry; problems name the keys and never the values.
func TestRotated(t *testing.T) {
	tooShort := func(s secret.Secret) error {
		if len(s) < 8 {
			return errors.New("too short")
		}
		return nil
	}
	got, errs := secret.Rotated("secret", "current-secret", nil, tooShort)
	require.Empty(t, errs)
	require.Equal(t, []secret.Secret{"current-secret"}, got)
	got, errs = secret.Rotated("secret", "", []secret.Secret{"current-secret", "previous-secret"}, tooShort)
	require.Empty(t, errs)
	require.Equal(t, []secret.Secret{"current-secret", "previous-secret"}, got)
	got, errs = secret.Rotated("secret", "", nil, tooShort)
	require.Empty(t, errs)
	require.Empty(t, got, "whether one is required is the caller's to say")

	for _, c := range []struct {
		one  secret.Secret
		many []secret.Secret
		want string
	}{
		{"current-secret", []secret.Secret{"previous-secret"}, "secret, secrets: set one or the other"},
		{"", []secret.Secret{"a-secret-1", "a-secret-2", "a-secret-3"}, "secrets: at most 2"},
		{"", []secret.Secret{"current-secret", ""}, "secrets[1]: empty"},
		{"", []secret.Secret{"shrt", "previous-secret"}, "secrets[0]: too short"},
		{"shrt", nil, "secret: too short"},
		{"", []secret.Secret{"current-secret", "current-secret"}, "secrets[1]: same value as secrets[0]"},
	} {
		got, errs := secret.Rotated("secret", c.one, c.many, tooShort)
		require.Nil(t, got)
		msg := errors.Join(errs...).Error()
		require.Contains(t, msg, c.want)
		for _, s := range append(c.many, c.one) {
			if s != "" {
				require.NotContains(t, msg, string(s))
			}
		}
	}
	require.Equal(t, []string{"current", "previous"}, []string{secret.Slot(0), secret.Slot(1)})
	require.Equal(t, [][]byte{[]byte("a"), []byte("b")}, secret.Keys(secret.Accepted("", []secret.Secret{"a", "b"})))
	require.Equal(t, []secret.Secret{"one"}, secret.Accepted("one", nil))
}
