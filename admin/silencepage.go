package admin

import "github.com/signalgate/signalgate/silence"

// SilencePage is one page of GET /silences.
type SilencePage struct {
	Silences []silence.Silence `json:"silences"`
}
