// Package bytesize is a size in bytes as configuration spells it (25MB, 512KiB).
package bytesize

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Size is a size in bytes that YAML may spell as 25MB, 512KiB, 1048576.
type Size int64

// Parse reads "25MB", "1MiB", "512KB", "100B" or a plain number.
func Parse(s string) (Size, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("want a size like 25MB or 512KB, got %q", s)
	}
	return Size(n * mult), nil
}

// UnmarshalYAML reports a bad size as a type error with its line, so the config loader
// names the key and keeps collecting the other problems.
func (b *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := Parse(n.Value)
	if err != nil || n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a size like 25MB or 512KB, got %q", n.Line, n.Value)}}
	}
	*b = v
	return nil
}

// UnmarshalText decodes sizes from text (JSON, flags).
func (b *Size) UnmarshalText(text []byte) error {
	v, err := Parse(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}
