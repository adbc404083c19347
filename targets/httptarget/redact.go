package httptarget

import (
	"cmp"
	"html"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// minPart is the shortest URL segment, query value or header word hidden on its own:
// shorter ones are ordinary words, not credentials (whole paths and values are hidden at
// any length from 2).
const minPart = 6

// maxExcerpt bounds the excerpt of an answer kept in an error.
const maxExcerpt = 300

// hider removes from a target's answer what SafeURL hides of its URL and the values of
// the headers sent: a server that repeats the request (Express's 404 answers
// "Cannot POST /hooks/<token>") would otherwise put the credential into stored errors,
// the admin API, the console and the log.
type hider struct {
	parts []string // longest first, so a whole path goes before its segments
}

func newHider(u string, headers map[string]string) hider {
	var h hider
	add := func(s string, least int) {
		if len(s) < least {
			return
		}
		// The answer may show it decoded, escaped for HTML, or with JSON's escaped slashes.
		for _, v := range []string{s, html.EscapeString(s), strings.ReplaceAll(s, "/", `\/`)} {
			if !slices.Contains(h.parts, v) {
				h.parts = append(h.parts, v)
			}
		}
	}
	addDecoded := func(s string, least int) {
		add(s, least)
		if d, err := url.PathUnescape(s); err == nil {
			add(d, least)
		}
		if d, err := url.QueryUnescape(s); err == nil {
			add(d, least)
		}
	}
	if p, err := url.Parse(u); err == nil {
		if p.User != nil {
			add(p.User.Username(), minPart)
			if pw, ok := p.User.Password(); ok {
				add(pw, 2)
			}
		}
		for _, path := range []string{p.EscapedPath(), p.Path} {
			addDecoded(strings.TrimSuffix(path, "/"), 2)
			for _, seg := range strings.Split(path, "/") {
				addDecoded(seg, minPart)
			}
		}
		addDecoded(p.RawQuery, 2)
		for _, pair := range strings.FieldsFunc(p.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
			_, v, _ := strings.Cut(pair, "=")
			addDecoded(v, minPart)
		}
	}
	for k, v := range headers {
		if strings.EqualFold(k, "Content-Type") {
			continue
		}
		add(v, 4)
		// The credential after an auth scheme ("Bearer <token>") may come back alone.
		for _, w := range strings.Fields(v) {
			add(w, minPart)
		}
	}
	slices.SortStableFunc(h.parts, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	return h
}

// hide replaces every hidden part of s with "…".
func (h hider) hide(s string) string {
	for _, p := range h.parts {
		s = strings.ReplaceAll(s, p, "…")
	}
	return s
}

// excerpt is the part of an answer's body an error keeps: hidden parts removed before it
// is cut (a cut first could leave a credential's head), then at most maxExcerpt bytes,
// cut between characters.
func (h hider) excerpt(raw []byte) string {
	s := strings.TrimSpace(h.hide(strings.ToValidUTF8(string(raw), "\uFFFD")))
	if len(s) <= maxExcerpt {
		return s
	}
	cut := maxExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
