package connectors

import (
	"errors"
	"fmt"
)

// Config is what every connector's config entry provides.
type Config interface {
	ConnectorName() string
	Validate() error
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
