package store

import (
	"errors"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// Stored body encodings (events.body_encoding).
const (
	bodyRaw  = ""
	bodyZstd = "zstd"
)

// DefaultBodyLimit bounds a stored body once decompressed when no WithBodyLimit is
// given: the gateway's default request body limit (GitHub's maximum payload).
const DefaultBodyLimit = 25 << 20

// bodyCodec compresses event bodies on the way in and restores them for replay,
// explain and the admin API: a 10 KB GitHub body is three SQLite pages as is, one
// compressed. klauspost/compress is pure Go, maintained and fast; both the encoder's
// EncodeAll and the decoder's DecodeAll are safe for concurrent use, so one of each
// serves the whole store.
type bodyCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

func newBodyCodec(limit int64) (*bodyCodec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, fmt.Errorf("set up the body encoder: %w", err)
	}
	// The limit caps what one stored row may decompress to: a crafted row (a
	// decompression bomb) fails instead of allocating past it.
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(uint64(limit)), zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, fmt.Errorf("set up the body decoder: %w", err)
	}
	return &bodyCodec{enc: enc, dec: dec}, nil
}

// pack answers the bytes to store and their encoding; a body compression does not
// shrink is kept as it is.
func (c *bodyCodec) pack(body []byte) ([]byte, string) {
	if len(body) == 0 {
		return body, bodyRaw
	}
	z := c.enc.EncodeAll(body, make([]byte, 0, len(body)/2))
	if len(z) >= len(body) {
		return body, bodyRaw
	}
	return z, bodyZstd
}

// unpack restores a stored body. Rows written before compression have no encoding.
func (c *bodyCodec) unpack(stored []byte, encoding string) ([]byte, error) {
	switch encoding {
	case bodyRaw:
		return stored, nil
	case bodyZstd:
		body, err := c.dec.DecodeAll(stored, nil)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return nil, fmt.Errorf("decompress body: larger than the body limit: %w", err)
		}
		if err != nil {
			return nil, fmt.Errorf("decompress body: %w", err)
		}
		return body, nil
	default:
		return nil, fmt.Errorf("unknown body encoding %q", encoding)
	}
}

func (c *bodyCodec) close() { c.dec.Close() }
