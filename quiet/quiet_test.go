package quiet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// set decodes a `time_intervals:` section as config.yaml is decoded (unknown keys refused).
func set(t *testing.T, doc string) *Set {
	t.Helper()
	var entries []Interval
	dec := yaml.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&entries))
	s, err := NewSet(entries)
	require.NoError(t, err)
	return s
}

const intervals = `
- name: nights
  time_intervals:
    - times: [{start_time: "22:00", end_time: "24:00"}, {start_time: "00:00", end_time: "07:00"}]
      location: Europe/Berlin
- name: twice
  time_intervals:
    - times: [{start_time: "02:00", end_time: "02:30"}]
      location: Europe/Berlin
- name: gap_start
  time_intervals:
    - times: [{start_time: "00:00", end_time: "02:30"}]
      location: Europe/Berlin
- name: gap_end
  time_intervals:
    - times: [{start_time: "02:30", end_time: "04:00"}]
      location: Europe/Berlin
- name: weekend
  time_intervals:
    - weekdays: ["saturday:sunday"]
      location: America/New_York
- name: month_end
  time_intervals:
    - days_of_month: ["-1"]
      times: [{start_time: "17:00", end_time: "24:00"}]
      location: America/New_York
- name: year
  time_intervals:
    - years: ["2026"]
- name: always
  time_intervals:
    - {}
- name: union
  time_intervals:
    - times: [{start_time: "09:00", end_time: "12:00"}]
    - times: [{start_time: "11:00", end_time: "13:00"}]
      weekdays: [monday]
`

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Europe/Berlin turns its clocks forward at 2026-03-29 01:00 UTC (02:00 CET → 03:00
// CEST) and back at 2026-10-25 01:00 UTC (03:00 CEST → 02:00 CET).
func TestEndAcrossDaylightSaving(t *testing.T) {
	s := set(t, intervals)
	for _, tc := range []struct {
		name, interval, at, end string
	}{
		// The spring night is an hour shorter: 23:00 CET to 07:00 CEST is 7 hours.
		{"spring night", "nights", "2026-03-28T22:00:00Z", "2026-03-29T05:00:00Z"},
		// The autumn night is an hour longer: 22:30 CEST to 07:00 CET is 9.5 hours.
		{"autumn night", "nights", "2026-10-24T20:30:00Z", "2026-10-25T06:00:00Z"},
		// 02:00–02:30 happens twice on the autumn day: each occurrence ends at its own 02:30.
		{"autumn first 02:10 (CEST)", "twice", "2026-10-25T00:10:00Z", "2026-10-25T00:30:00Z"},
		{"autumn second 02:10 (CET)", "twice", "2026-10-25T01:10:00Z", "2026-10-25T01:30:00Z"},
		// 02:30 does not exist on the spring day: 00:00–02:30 ends when the clock jumps
		// from 02:00 to 03:00, and 02:30–04:00 is entered at the jump.
		{"spring gap start", "gap_start", "2026-03-29T00:30:00Z", "2026-03-29T01:00:00Z"},
		{"spring gap end", "gap_end", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
		// America/New_York: the weekend of its spring change (2026-03-08 02:00 EST → EDT)
		// ends at Monday 00:00 EDT, and that of its autumn change (2026-11-01) at 00:00 EST.
		{"weekend spring", "weekend", "2026-03-07T12:00:00Z", "2026-03-09T04:00:00Z"},
		{"weekend autumn", "weekend", "2026-10-31T12:00:00Z", "2026-11-02T05:00:00Z"},
		{"last day of february", "month_end", "2026-02-28T22:30:00Z", "2026-03-01T05:00:00Z"},
		{"year", "year", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		// A union ends when none of its intervals holds (Monday: 09:00–13:00).
		{"union monday", "union", "2026-11-23T09:30:00Z", "2026-11-23T13:00:00Z"},
		{"union tuesday", "union", "2026-11-24T09:30:00Z", "2026-11-24T12:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at := utc(tc.at)
			require.True(t, s.Contains(tc.interval, at))
			end, capped := s.End(tc.interval, at)
			require.False(t, capped)
			require.Equal(t, utc(tc.end), end.UTC())
			require.False(t, s.Contains(tc.interval, end))
			require.True(t, s.Contains(tc.interval, end.Add(-time.Minute)), "the minute before the end is inside")
		})
	}
}

// End agrees with stepping minute by minute, from every 25 minutes of the days around
// both of Berlin's changes and both of New York's.
func TestEndMatchesMinuteByMinute(t *testing.T) {
	s := set(t, intervals)
	days := []string{"2026-03-28T00:00:00Z", "2026-10-24T00:00:00Z", "2026-03-07T00:00:00Z", "2026-10-31T00:00:00Z", "2026-02-27T00:00:00Z"}
	for _, name := range []string{"nights", "twice", "gap_start", "gap_end", "weekend", "month_end", "union"} {
		for _, day := range days {
			for at := utc(day); at.Before(utc(day).Add(48 * time.Hour)); at = at.Add(25 * time.Minute) {
				want := at
				if s.Contains(name, at) {
					for want = at.Add(time.Minute); s.Contains(name, want); want = want.Add(time.Minute) {
					}
				}
				got, capped := s.End(name, at)
				require.False(t, capped)
				require.Equal(t, want, got.UTC(), "%s from %s", name, at)
			}
		}
	}
}

// An interval that never ends, or changes more often than MaxSteps allows within
// MaxSearch, is cut: the end returned is still inside, after t, and no further than
// a day past MaxSearch.
func TestEndIsBounded(t *testing.T) {
	s := set(t, intervals)
	at := utc("2026-11-26T15:00:00Z")
	end, capped := s.End("always", at)
	require.True(t, capped)
	require.True(t, end.After(at.Add(MaxSearch)) && !end.After(at.Add(MaxSearch+24*time.Hour)), "end %s", end)
	require.True(t, s.Contains("always", end))

	// A day cut into 72 twenty-minute ranges: always inside, a candidate every twenty
	// minutes, so MaxSteps runs out (after about 139 days) before MaxSearch.
	var times []string
	for m := 0; m < 1440; m += 20 {
		times = append(times, fmt.Sprintf(`{start_time: "%02d:%02d", end_time: "%02d:%02d"}`, m/60, m%60, (m+20)/60, (m+20)%60))
	}
	dense := set(t, `
- name: dense
  time_intervals:
    - times: [`+strings.Join(times, ", ")+`]
`)
	end, capped = dense.End("dense", at)
	require.True(t, capped)
	require.Equal(t, at.Add(MaxSteps*20*time.Minute), end.UTC())
	require.True(t, dense.Contains("dense", end))
}

func TestEndOutsideIsAt(t *testing.T) {
	s := set(t, intervals)
	at := utc("2026-11-26T12:00:00Z")
	require.False(t, s.Contains("nights", at))
	end, capped := s.End("nights", at)
	require.Equal(t, at, end)
	require.False(t, capped)
	require.False(t, s.Contains("unknown", at))
	var none *Set
	require.False(t, none.Has("nights"))
	require.False(t, none.Contains("nights", at))
}

func TestNewSetErrors(t *testing.T) {
	_, err := NewSet([]Interval{{Name: "a"}, {Name: ""}, {Name: "a"}})
	require.EqualError(t, err, "[1].name: required\n[2].name: duplicate time interval \"a\"")

	var entries []Interval
	for _, doc := range []string{
		`[{name: x, time_intervals: [{times: [{start_time: "07:00", end_time: "06:00"}]}]}]`,
		`[{name: x, time_intervals: [{weekdays: [funday]}]}]`,
		`[{name: x, time_intervals: [{location: Mars/Olympus}]}]`,
		`[{name: x, time_intervals: [{hours: [1]}]}]`,
	} {
		dec := yaml.NewDecoder(strings.NewReader(doc))
		dec.KnownFields(true)
		require.Error(t, dec.Decode(&entries), doc)
	}
}

// An interval writes back as Alertmanager writes it (months as numbers), in JSON and
// YAML, and reads back the same.
func TestIntervalRoundTrip(t *testing.T) {
	doc := `[{name: nights, time_intervals: [{times: [{start_time: "22:00", end_time: "24:00"}], weekdays: ["monday:friday"],
  days_of_month: ["-3:-1"], months: ["march:may"], years: ["2026:2028"], location: Europe/Berlin}]}]`
	var entries []Interval
	require.NoError(t, yaml.Unmarshal([]byte(doc), &entries))
	raw, err := json.Marshal(entries)
	require.NoError(t, err)
	require.JSONEq(t, `[{"name":"nights","time_intervals":[{"times":[{"start_time":"22:00","end_time":"24:00"}],"weekdays":["monday:friday"],
		"days_of_month":["-3:-1"],"months":["3:5"],"years":["2026:2028"],"location":"Europe/Berlin"}]}]`, string(raw))
	out, err := yaml.Marshal(entries)
	require.NoError(t, err)
	var again []Interval
	require.NoError(t, yaml.Unmarshal(out, &again))
	require.Equal(t, entries, again)
}
