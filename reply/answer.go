package reply

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"

	"github.com/signalgate/signalgate/inbox"
)

// RunAnswerID is the reply id of the answer a runtime gave in gateway run runID, for the
// targets that answer by themselves (target.reply: auto): every replica and every read of
// the run queue the same reply, which the outbox takes once. A run id that would not make
// a valid reply id is hashed.
func RunAnswerID(runID string) string {
	id := "run-" + runID
	if !ValidID(id) {
		sum := sha256.Sum256([]byte(runID))
		id = "run-" + hex.EncodeToString(sum[:16])
	}
	return id
}

// Queuer is the outbox as a runtime's own answers reach it.
type Queuer interface {
	Queue(ctx context.Context, k inbox.ThreadKey, req Request) (Reply, error)
}

// QueueAnswer queues req, the answer a runtime gave on thread k, and logs what became of
// it with attrs (the run's or task's id). done is false only when the gateway failed in
// a way a later attempt may pass, so the caller keeps the run to try again; a refusal, or
// a thread with no place to answer, is final.
func QueueAnswer(ctx context.Context, q Queuer, log *slog.Logger, k inbox.ThreadKey, req Request, attrs ...any) (done bool) {
	r, err := q.Queue(ctx, k, req)
	_, refused := Code(err)
	attrs = append([]any{"thread", k.String()}, attrs...)
	switch {
	case err == nil:
		log.Info("runtime's answer queued as a reply", append(attrs, "reply_id", r.ID, "status", string(r.Status))...)
	case errors.Is(err, ErrUnknownPlace):
		log.Info("runtime's answer not sent: the thread has no place to answer", append(attrs, "error", err.Error())...)
	case refused:
		log.Warn("runtime's answer refused by the outbox", append(attrs, "error", err.Error())...)
	default:
		log.Warn("queue the runtime's answer as a reply; trying again later", append(attrs, "error", err.Error())...)
		return false
	}
	return true
}
