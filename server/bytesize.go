package server

import "github.com/signalgate/signalgate/bytesize"

// ByteSize is bytesize.Size under the name the server's configuration has always used.
type ByteSize = bytesize.Size

// ParseByteSize reads "25MB", "1MiB", "512KB", "100B" or a plain number.
func ParseByteSize(s string) (ByteSize, error) { return bytesize.Parse(s) }
