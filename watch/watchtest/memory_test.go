package watchtest_test

import (
	"testing"

	"github.com/signalgate/signalgate/watch"
	"github.com/signalgate/signalgate/watch/watchtest"
)

func TestMemoryConforms(t *testing.T) {
	watchtest.Run(t, func(*testing.T) watch.Store { return watchtest.NewMemory() })
}
