package gateway

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// fileSuffix turns any secret's key into the key of the file that holds it:
// `secret_file: /run/secrets/github` instead of `secret: "${GITHUB_WEBHOOK_SECRET}"`.
// A file is read when the config is loaded and at every reload, so a secret mounted by
// Docker or Kubernetes can change under a running gateway; an environment variable
// cannot (a process keeps the environment it started with).
const fileSuffix = "_file"

// maxSecretFile bounds a secret file (a PEM private key is a few KiB): a path to a
// large file or a device is a mistake, not a secret.
const maxSecretFile = 64 << 10

// secretFile is a `<key>_file` the config walk found beside a secret key.
type secretFile struct {
	mapping *yaml.Node // the mapping holding it
	index   int        // its key node's index in mapping.Content
	path    string     // the secret's key path (without the suffix)
	typ     reflect.Type
}

// secretRoot is a key holding secrets (one, a list or a map of them), for the advice
// an unset variable gets.
type secretRoot struct{ path, key string }

// isSecret: a value of t is a secret, a list of secrets or a map of them.
func isSecret(t reflect.Type) bool {
	if t == secretType {
		return true
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Map:
		return t.Elem() == secretType
	}
	return false
}

// member walks the i-th key of mapping n, whose known keys are sections. It reports
// whether the key is known: one of sections or, when the walk collects them, a
// secret's `_file` key.
func (w *configWalk) member(sections map[string]reflect.Value, n *yaml.Node, i int, path string) bool {
	key := n.Content[i].Value
	if v, ok := sections[key]; ok {
		if isSecret(v.Type()) {
			w.secretRoots = append(w.secretRoots, secretRoot{path: join(path, key), key: key})
		}
		w.walk(v, n.Content[i+1], join(path, key))
		return true
	}
	if !w.collectFiles {
		return false
	}
	base, ok := strings.CutSuffix(key, fileSuffix)
	if v, known := sections[base]; ok && known && isSecret(v.Type()) {
		w.files = append(w.files, secretFile{mapping: n, index: i, path: join(path, base), typ: v.Type()})
		return true
	}
	return false
}

// fileKeyOf is the `_file` key that could hold the value at key instead, when key is
// (in) a secret's; "" otherwise.
func (w *configWalk) fileKeyOf(key string) string {
	for _, r := range w.secretRoots {
		if key == r.path || strings.HasPrefix(key, r.path+"[") || strings.HasPrefix(key, r.path+".") {
			return r.key + fileSuffix
		}
	}
	return ""
}

// readSecretFiles replaces every secret's `<key>_file` in doc by `<key>` holding the
// file's content (one trailing newline trimmed). The value has the secret's shape with
// paths for values: a path, a list of paths (a rotated list) or a map of paths (header
// values). A relative path is relative to dir, the config file's directory. Problems
// name the key and the path, never the content; failed are the secrets' keys they
// stand for, so a missing value is not reported twice.
func readSecretFiles(doc *yaml.Node, dir string, kinds []integration, targets []targetKind) (problems, failed []string) {
	if !hasFileKey(doc) {
		return nil, nil
	}
	// Where the `_file` keys are secrets' is the config's types to say: decode once to
	// find them (the decode that counts, and reports, comes after).
	var scratch Config
	_ = scratch.decode(doc, kinds, targets)
	w := configWalk{targets: targets, collectFiles: true}
	w.walk(reflect.ValueOf(&scratch).Elem(), doc, "")
	// Last first: dropping a pair leaves the indexes of those before it as they were.
	for i := len(w.files) - 1; i >= 0; i-- {
		f := w.files[i]
		keyNode, value := f.mapping.Content[f.index], f.mapping.Content[f.index+1]
		base := strings.TrimSuffix(keyNode.Value, fileSuffix)
		fileKey := f.path + fileSuffix
		problem := ""
		switch want := shapeOf(f.typ); {
		case mappingValue(f.mapping, base) != nil:
			problem = fmt.Sprintf("%s, %s: set one or the other", f.path, fileKey)
		case value.Kind != want:
			problem = fmt.Sprintf("%s: want %s", fileKey, map[yaml.Kind]string{yaml.ScalarNode: "a file path",
				yaml.SequenceNode: "a list of file paths, as " + base + " is a list", yaml.MappingNode: "a map of file paths, as " + base + " is a map"}[want])
		}
		if problem != "" {
			// Dropped: what the file holds must never reach a decode error.
			problems = append(problems, problem)
			failed = append(failed, f.path)
			f.mapping.Content = append(f.mapping.Content[:f.index], f.mapping.Content[f.index+2:]...)
			continue
		}
		errs := readInto(value, fileKey, dir)
		for _, err := range errs {
			problems = append(problems, err.Error())
		}
		if len(errs) > 0 {
			failed = append(failed, f.path)
		}
		keyNode.Value = base
	}
	slices.Reverse(problems)
	return problems, failed
}

// shapeOf is the YAML node kind a secret of type t is written as.
func shapeOf(t reflect.Type) yaml.Kind {
	switch t.Kind() {
	case reflect.Slice:
		return yaml.SequenceNode
	case reflect.Map:
		return yaml.MappingNode
	}
	return yaml.ScalarNode
}

// readInto replaces each path in value (a scalar, or the items of a list or map) by
// the content of its file.
func readInto(value *yaml.Node, key, dir string) []error {
	var errs []error
	read := func(n *yaml.Node, key string) {
		if n.Kind != yaml.ScalarNode {
			errs = append(errs, fmt.Errorf("%s: want a file path", key))
			return
		}
		s, err := readSecretFile(n.Value, dir)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
		n.Value, n.Tag, n.Style = s, "!!str", 0
	}
	switch value.Kind {
	case yaml.SequenceNode:
		for i, c := range value.Content {
			read(c, fmt.Sprintf("%s[%d]", key, i))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(value.Content); i += 2 {
			read(value.Content[i+1], join(key, value.Content[i].Value))
		}
	default:
		read(value, key)
	}
	return errs
}

// readSecretFile reads one secret file. Its errors name the path, never the content.
func readSecretFile(path, dir string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", errors.New("want a file path, got an empty one")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read secret file: %w", err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("read secret file %s: %w", path, err)
	}
	if len(raw) > maxSecretFile {
		return "", fmt.Errorf("secret file %s: larger than %d KiB", path, maxSecretFile>>10)
	}
	s := strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
	if s == "" {
		return "", fmt.Errorf("secret file %s is empty", path)
	}
	return s, nil
}

// hasFileKey: some mapping in n has a key ending in fileSuffix.
func hasFileKey(n *yaml.Node) bool {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if strings.HasSuffix(n.Content[i].Value, fileSuffix) {
				return true
			}
		}
	}
	for _, c := range n.Content {
		if hasFileKey(c) {
			return true
		}
	}
	return false
}

// WhileRunning is the error as a running gateway's reload gives it: a variable the
// file names but the process does not have cannot be set from outside, so the advice
// is to restart, or to move the secret to a file, which every reload reads again.
func (e *ConfigError) WhileRunning() *ConfigError {
	out := &ConfigError{Path: e.Path, Problems: append([]string(nil), e.Problems...), unset: e.unset}
	for _, u := range e.unset {
		advice := "the running gateway keeps the environment it started with: restart to pick up new environment variables"
		if u.fileKey != "" {
			advice += ", or use " + u.fileKey + " (a file read at every reload)"
		}
		p := unsetProblem(u.key, u.name)
		for i := range out.Problems {
			if out.Problems[i] == p {
				out.Problems[i] = p + " (" + advice + ")"
			}
		}
	}
	return out
}
