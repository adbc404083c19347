package inbox

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckID is the agent API's rule for an id: what it refuses, no thread may be created
// on, or its agent could neither read it nor finish the run its wake opened.
func CheckID(v string) error {
	if v == "" {
		return errors.New("must not be empty")
	}
	return CheckText(v, MaxIDBytes)
}

// CheckText is the rule for a short text taken from a request (an id, a filter value):
// at most max bytes of valid UTF-8 without control characters.
func CheckText(v string, max int) error {
	switch {
	case len(v) > max:
		return fmt.Errorf("longer than %d bytes", max)
	case !utf8.ValidString(v):
		return errors.New("not valid UTF-8")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return errors.New("contains control characters")
	}
	return nil
}

// CleanID makes a rendered id one CheckID accepts where it can: each run of control
// characters (a customer name's line break) becomes one space, invalid UTF-8 becomes
// U+FFFD, and the ends are trimmed. Length is left alone (cutting could merge two
// threads): an id over MaxIDBytes makes the event invalid when stored (CheckBounds).
func CleanID(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	var b strings.Builder
	inRun := false
	for _, r := range v {
		if unicode.IsControl(r) {
			if !inRun {
				b.WriteByte(' ')
			}
			inRun = true
			continue
		}
		inRun = false
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}
