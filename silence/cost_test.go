package silence

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/signalgate/signalgate/inbox"
)

// An operator's short regex with counted repetitions compiles to thousands of
// instructions, and Go's linear-time matcher still costs instructions × bytes: against
// a sender's 60 KB attribute, seconds per record. 37 bytes, 6,001 instructions.
const costlyRegex = `(?:\pL{0,999}\pL{0,999}\pL{0,999})*\d`

// heaviestAdmitted is as costly a regex as a silence admits: just under
// MaxRegexInstructions.
const heaviestAdmitted = `(?:\pL{0,165}\pL{0,165}\pL{0,165})*\d`

// senderValue is what a sender puts in an attribute: 60 KB of letters the costly
// regexes keep every thread alive on, and one byte past them that decides.
func senderValue() string { return strings.Repeat("a", 60*1024) + "!" }

func regexSilence(value string) Input {
	return Input{Matchers: []Matcher{eq("agent", "coder"), {Name: "title", Value: value, IsRegex: true}},
		EndsAt: t0.Add(time.Hour), CreatedBy: "ops", Comment: "noisy titles"}
}

func titled(title string) inbox.Subject {
	sub := subject(inbox.PriorityHigh)
	sub.Attributes = sub.Attributes.Set("title", title)
	return sub
}

// The operator's 37-byte regex is refused when the silence is made, with a 400 naming
// the field and the limit; one within the limit reads at most MaxRegexInputBytes of
// the sender's 60 KB value, so what the sender adds past them neither costs nor counts.
func TestRegexCostIsBounded(t *testing.T) {
	require.Len(t, costlyRegex, 37)
	ctx := context.Background()
	clock := t0
	s := newService(t, &clock)

	_, err := s.Create(ctx, regexSilence(costlyRegex))
	var ve *ValidationError
	require.True(t, errors.As(err, &ve), "%v", err)
	require.Contains(t, err.Error(), "matchers[1].value: the regular expression compiles to 6001 instructions, at most 1000")

	_, err = s.Create(ctx, regexSilence(heaviestAdmitted))
	require.NoError(t, err)
	// The whole value ends in "!", which \d does not match; its first
	// MaxRegexInputBytes are letters only, which the regex does not match either.
	_, held := s.Held(titled(senderValue()), t0)
	require.False(t, held)

	// `a*` matches the first MaxRegexInputBytes of the sender's value and not the whole:
	// the silence holds, so the regex read no further.
	_, err = s.Create(ctx, regexSilence(`a*`))
	require.NoError(t, err)
	h, held := s.Held(titled(senderValue()), t0)
	require.True(t, held, "the regex reads the value's first %d bytes only", MaxRegexInputBytes)
	require.Equal(t, "silence:s2", h.By)

	// The cut falls on a character boundary: a two-byte "é" straddling the limit is
	// left out whole, not read as a broken byte.
	straddling := strings.Repeat("a", MaxRegexInputBytes-1) + "é" + "!"
	_, held = s.Held(titled(straddling), t0)
	require.True(t, held, "the value is cut before the character the limit splits")
}

// BenchmarkHeldLongAttribute is one record with a sender's 60 KB attribute deciding
// against a silence with the costliest regex a silence admits.
func BenchmarkHeldLongAttribute(b *testing.B) {
	clock := t0
	s := newService(nil, &clock)
	if _, err := s.Create(context.Background(), regexSilence(heaviestAdmitted)); err != nil {
		b.Fatal(err)
	}
	sub := titled(senderValue())
	b.ResetTimer()
	for b.Loop() {
		s.Held(sub, t0)
	}
}
