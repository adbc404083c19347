package github

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/signalgate/signalgate/reply"
	"github.com/signalgate/signalgate/watch"
)

// Place is where a GitHub answer goes: the fields of a GitHub replyTo besides source and
// connector.
type Place struct {
	Repo   string `json:"repo,omitempty" doc:"GitHub owner/name."` // owner/name
	Number int    `json:"number,omitempty" doc:"GitHub issue or PR number."`
	// ReviewCommentID, when set, is the review comment whose thread the answer joins.
	ReviewCommentID int64 `json:"reviewCommentId,omitempty" doc:"GitHub review comment the answer replies to."`
}

// PlaceCodec reads GitHub places (the kinds table's row carries it).
var PlaceCodec reply.PlaceCodec = reply.Codec[Place]{}

// Key is the repository, number and review comment.
func (p Place) Key() string { return fmt.Sprintf("%q %d %d", p.Repo, p.Number, p.ReviewCommentID) }

// Describe is "acme/api#7", with " review comment N" in a review thread.
func (p Place) Describe() string {
	where := p.Repo + "#" + strconv.Itoa(p.Number)
	if p.ReviewCommentID != 0 {
		where += " review comment " + strconv.FormatInt(p.ReviewCommentID, 10)
	}
	return where
}

// WatchResource is the issue or pull request "owner/repo#7", whatever review thread.
func (p Place) WatchResource() (string, bool) {
	if p.Repo == "" || p.Number <= 0 {
		return "", false
	}
	return strings.ToLower(p.Repo) + "#" + strconv.Itoa(p.Number), true
}

var (
	watchRepo   = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$`)
	maxIssueNum = 1 << 31
)

// WatchResource reads a GitHub watch resource: an issue or pull request
// "owner/repo#number", or a whole repository "owner/repo", lower-cased.
func WatchResource(r string) (watch.Resource, error) {
	repo, num, hasNum := strings.Cut(r, "#")
	if !watchRepo.MatchString(repo) {
		return watch.Resource{}, errors.New("want owner/repo#number or owner/repo")
	}
	repo = strings.ToLower(repo)
	if !hasNum {
		return watch.Resource{Canonical: repo, Whole: true}, nil
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || n >= maxIssueNum {
		return watch.Resource{}, fmt.Errorf("%q is not an issue or pull request number", num)
	}
	return watch.Resource{Canonical: repo + "#" + strconv.Itoa(n)}, nil
}

// RepoSeer tells whether a connector has received a verified delivery for a repository
// (the store, which SeenRepos fills).
type RepoSeer interface {
	RepoSeen(ctx context.Context, connector, repo string) (bool, error)
}

// AdmitWatch is what a GitHub connector of cfgs may watch: a repository it receives
// events for (seen by repos), a whole one only where it has watch_repositories.
func AdmitWatch(cfgs []Config, repos RepoSeer) watch.Admit {
	whole := map[string]bool{}
	for _, c := range cfgs {
		whole[c.Name] = c.WatchRepositories
	}
	return func(ctx context.Context, conn string, r watch.Resource) error {
		repo, _, _ := strings.Cut(r.Canonical, "#")
		if r.Whole && !whole[conn] {
			return fmt.Errorf("%w: resource: connector %q does not allow watching a whole repository "+
				"(connectors.github[].watch_repositories); name an issue or pull request as owner/repo#number", watch.ErrInvalid, conn)
		}
		seen, err := repos.RepoSeen(ctx, conn, repo)
		if err != nil {
			return fmt.Errorf("look up the repositories of connector %q: %w", conn, err)
		}
		if !seen {
			return fmt.Errorf("%w: resource: connector %q receives no events for repository %s", watch.ErrUnknown, conn, repo)
		}
		return nil
	}
}
