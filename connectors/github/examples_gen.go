//go:build ignore

// examples_gen.go writes examples/: the first example of each action of the events
// below, from the pinned @octokit/webhooks-examples that scripts/fetch-github-examples.sh
// fetches into testdata/octokit, each as GitHub sends it (compact JSON, the example's
// bytes otherwise unchanged). After make fixtures: go generate ./connectors/github.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// events are the events the docs and the shipped config route, and ping.
var events = []string{
	"check_run", "check_suite", "workflow_run", "workflow_job", "pull_request", "pull_request_review",
	"pull_request_review_comment", "issue_comment", "issues", "push", "ping", "status", "release",
	"deployment_status", "dependabot_alert", "code_scanning_alert",
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "examples_gen:", err)
		os.Exit(1)
	}
}

func run() error {
	raw, err := os.ReadFile(filepath.Join("testdata", "octokit", "api.github.com", "index.json"))
	if err != nil {
		return fmt.Errorf("read the pinned examples (make fixtures fetches them): %w", err)
	}
	var index []struct {
		Name     string            `json:"name"`
		Examples []json.RawMessage `json:"examples"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join("examples", "*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	for _, e := range index {
		if !slices.Contains(events, e.Name) {
			continue
		}
		seen := map[string]bool{}
		for _, ex := range e.Examples {
			var head struct {
				Action string `json:"action"`
			}
			if err := json.Unmarshal(ex, &head); err != nil {
				return err
			}
			if seen[head.Action] {
				continue
			}
			seen[head.Action] = true
			var out bytes.Buffer
			if err := json.Compact(&out, ex); err != nil {
				return err
			}
			name := e.Name
			if head.Action != "" {
				name += "." + head.Action
			}
			if err := os.WriteFile(filepath.Join("examples", name+".json"), out.Bytes(), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
