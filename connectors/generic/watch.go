package generic

import "github.com/signalgate/signalgate/watch"

// WatchResource reads a generic watch resource: an item's sourceId or netKey, as the
// sender wrote it.
func WatchResource(r string) (watch.Resource, error) { return watch.Resource{Canonical: r}, nil }
