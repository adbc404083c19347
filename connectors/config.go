package connectors

import (
	"errors"
	"fmt"
	"strings"
)

// Config is what every connector's config entry provides.
type Config interface {
	ConnectorName() string
	Validate() error
}

// CheckName is the rule every connector's name keeps: given, and without the characters
// that would break the paths and keys it names the connector in (its webhook path, its
// metric labels, its state keys "source/name").
func CheckName(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("name: required")
	}
	if strings.ContainsAny(name, "/?#% ") {
		return fmt.Errorf("name: %q must not contain '/', '?', '#', '%%' or spaces (it is a URL path segment)", name)
	}
	return nil
}

// ValidateConfigs checks every entry of one source's list and that names are unique;
// paths are relative to the `connectors` section, e.g. "github[1].secret: required".
func ValidateConfigs[C Config](source string, cfgs []C) error {
	var errs []error
	seen := map[string]int{}
	for i, c := range cfgs {
		if err := c.Validate(); err != nil {
			errs = append(errs, PrefixErrors(fmt.Sprintf("%s[%d].", source, i), err))
		}
		name := c.ConnectorName()
		if j, dup := seen[name]; dup && name != "" {
			errs = append(errs, fmt.Errorf("%s[%d].name: duplicate connector name %q (also %s[%d])", source, i, name, source, j))
		}
		seen[name] = i
	}
	return errors.Join(errs...)
}
