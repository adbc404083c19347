package reply_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/signalgate/signalgate/reply"
)

func TestNeutralizeMarkers(t *testing.T) {
	const wj = "\u2060"
	for in, want := range map[string]string{
		"":                              "",
		"no marker here":                "no marker here",
		"signalgate reply":              "signalgate reply",
		"<!-- signalgate:reply:r-1 -->": "<!-- signalgate" + wj + ":reply:r-1 -->",
		"SignalGate:REPLY:x and signalgate:reply:y": "SignalGate" + wj + ":REPLY:x and signalgate" + wj + ":reply:y",
		"İİ signalgate:reply:é":                     "İİ signalgate" + wj + ":reply:é", // offsets kept past runes ToLower resizes
		"\xff signalgate:reply:x":                   "\xff signalgate" + wj + ":reply:x",
		"signalgatesignalgate:reply:":               "signalgatesignalgate" + wj + ":reply:",
	} {
		got := reply.NeutralizeMarkers(in)
		assert.Equal(t, want, got, "%q", in)
		assert.Equal(t, got, reply.NeutralizeMarkers(got), "again changes nothing: %q", in)
	}
}

func FuzzNeutralizeMarkers(f *testing.F) {
	for _, s := range []string{"<!-- signalgate:reply:a -->", "SIGNALGATE:REPLY:", "signalgate\u2060:reply:", "İsignalgate:reply:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := reply.NeutralizeMarkers(s)
		if strings.Contains(strings.ToLower(got), reply.MarkerToken) {
			t.Fatalf("%q still carries a marker: %q", s, got)
		}
		if again := reply.NeutralizeMarkers(got); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
		if strings.ReplaceAll(got, "\u2060", "") != strings.ReplaceAll(s, "\u2060", "") {
			t.Fatalf("%q changed beyond word joiners: %q", s, got)
		}
	})
}
