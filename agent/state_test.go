package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNextState(t *testing.T) {
	lane := func(v int, key, mode string) *StateLane { return &StateLane{Version: v, CacheKey: key, Mode: mode} }
	tests := []struct {
		name    string
		current *StateLane
		key     string
		mode    string
		want    StateLane
		skipped bool
	}{
		{"first is version 1", nil, "k1", StateSnapshot, StateLane{1, "k1", StateSnapshot}, false},
		{"first without mode is snapshot", nil, "k1", "", StateLane{1, "k1", StateSnapshot}, false},
		{"same key and mode skipped", lane(3, "k1", StateSnapshot), "k1", StateSnapshot, StateLane{3, "k1", StateSnapshot}, true},
		{"empty mode equals snapshot", lane(3, "k1", ""), "k1", "", StateLane{3, "k1", ""}, true},
		{"new key bumps", lane(3, "k1", StateSnapshot), "k2", StateSnapshot, StateLane{4, "k2", StateSnapshot}, false},
		{"new mode bumps", lane(3, "k1", StateSnapshot), "k1", StateDelta, StateLane{4, "k1", StateDelta}, false},
		{"delta repeated skipped", lane(7, "d", StateDelta), "d", StateDelta, StateLane{7, "d", StateDelta}, true},
		{"empty cache key never skips", lane(2, "", StateSnapshot), "", StateSnapshot, StateLane{3, "", StateSnapshot}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, skipped := NextState(tt.current, tt.key, tt.mode)
			require.Equal(t, tt.skipped, skipped)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestNextStateSequence(t *testing.T) {
	var cur *StateLane
	var versions []int
	var skips []bool
	for _, key := range []string{"a", "a", "b", "b", "a"} {
		next, skipped := NextState(cur, key, StateSnapshot)
		cur = &next
		versions = append(versions, next.Version)
		skips = append(skips, skipped)
	}
	require.Equal(t, []int{1, 1, 2, 2, 3}, versions)
	require.Equal(t, []bool{false, true, false, true, false}, skips)
}

func TestValidStateMode(t *testing.T) {
	require.True(t, ValidStateMode(""))
	require.True(t, ValidStateMode(StateSnapshot))
	require.True(t, ValidStateMode(StateDelta))
	require.False(t, ValidStateMode("full"))
}
