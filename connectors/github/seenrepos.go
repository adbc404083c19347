package github

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// maxSeenRepos bounds the repositories remembered as recorded; past it the memory
// starts again (a repository is then written once more, which is harmless).
const maxSeenRepos = 10_000

// SeenRepos keeps the repositories each connector receives deliveries for (the store).
type SeenRepos interface {
	SeenRepo(ctx context.Context, connector, repo string, now time.Time) error
}

// seenRepos writes each connector's repository once per process.
type seenRepos struct {
	to   SeenRepos
	mu   sync.Mutex
	done map[string]struct{} // connector + "\x1f" + repository
}

// note records the repository a verified payload names (repository.full_name, read
// once with the rest of the payload), lower-cased as watches name it. A failure is
// logged: the delivery is stored anyway.
func (s *seenRepos) note(ctx context.Context, log *slog.Logger, connector, fullName string, now time.Time) {
	if s == nil || fullName == "" || len(fullName) > 200 {
		return
	}
	repo := strings.ToLower(fullName)
	key := connector + "\x1f" + repo
	s.mu.Lock()
	_, done := s.done[key]
	s.mu.Unlock()
	if done {
		return
	}
	if err := s.to.SeenRepo(ctx, connector, repo, now); err != nil {
		log.Warn("record repository", "connector", connector, "repo", repo, "error", err.Error())
		return
	}
	s.mu.Lock()
	if len(s.done) >= maxSeenRepos {
		clear(s.done)
	}
	s.done[key] = struct{}{}
	s.mu.Unlock()
}
