// Package conditiontest has the hostile payloads the expression tests share.
package conditiontest

import (
	"bytes"
	"strings"
)

// ScanWhen is a `when` that is cheap on a small body and quadratic on ScanBomb's:
// every item is looked for in every blocked entry.
const ScanWhen = `any(payload.items, {# in payload.blocked})`

// ScanBomb is a 117 KB JSON body (a Standard Webhooks envelope without data, so the
// generic connector takes it) of two 30,000-item arrays with nothing in common, so
// ScanWhen compares 900 million pairs (seconds of CPU) unless it is stopped.
func ScanBomb() []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"scan","items":[`)
	b.WriteString(strings.TrimSuffix(strings.Repeat("1,", 30000), ","))
	b.WriteString(`],"blocked":[`)
	b.WriteString(strings.TrimSuffix(strings.Repeat("2,", 30000), ","))
	b.WriteString(`]}`)
	return b.Bytes()
}
