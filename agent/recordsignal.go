package agent

import (
	"strconv"

	"github.com/google/uuid"

	"github.com/signalgate/signalgate/inbox"
)

// SignalNamespace scopes the gateway's name-based signal ids (a record's full
// notification, a thread's summaries, recovered signals).
func SignalNamespace() uuid.UUID {
	return uuid.UUID{0x5b, 0x1c, 0x6e, 0x0a, 0x93, 0x2d, 0x4f, 0x61, 0xa4, 0x07, 0x1e, 0x8b, 0x52, 0xc9, 0x3d, 0x70}
}

// RecordSignalID names the signal that hands a record's current content to its thread
// (a full notification or a message; every merge bumps the count): retries of the same
// content reuse it, so a target or subscriber can drop a repeat, while content merged in
// later makes a new signal. It is also how a queued message is named before it is handed
// over (POST …/messages/cancel takes it).
func RecordSignalID(r inbox.Record) string {
	name := "full\x00" + r.ID + "\x00" + strconv.Itoa(r.CoalescedCount) + "\x00" + strconv.FormatInt(r.UpdatedAt.UnixMicro(), 10)
	return uuid.NewSHA1(SignalNamespace(), []byte(name)).String()
}
