package console

import (
	"net/url"
	"path"
	"strings"
)

// localPath keeps a redirect (sign-in's next, a form's back) inside the console:
// anything else becomes the threads page. The path is judged as a browser will read it,
// percent-decoded with its dot segments resolved (`/console/%2e%2e/evil` is `/evil`),
// and the result is that resolved path re-encoded, so what was judged is what is followed.
func localPath(p string) string {
	const fallback = Prefix + "/threads"
	// Browsers drop tabs and newlines inside a URL and read a backslash as a slash: either
	// could turn a path into `//host`.
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsAny(p, "\\\t\r\n") {
		return fallback
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.ContainsAny(u.Path, "\\\x00\t\r\n") {
		return fallback
	}
	clean := path.Clean(u.Path)
	if !strings.HasPrefix(clean, Prefix+"/") || strings.HasPrefix(clean, Prefix+"/signin") ||
		strings.HasPrefix(clean, Prefix+"/static/") || strings.HasSuffix(clean, "/stream") {
		return fallback
	}
	return (&url.URL{Path: clean, RawQuery: u.RawQuery}).String()
}
