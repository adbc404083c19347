package admin

import (
	"net/http/pprof"

	"github.com/labstack/echo/v4"
)

// pprofPath serves Go's runtime profiles when admin.pprof is on: the index at
// /debug/pprof/, then heap, goroutine, allocs, block, mutex, threadcreate, profile
// (CPU, ?seconds=N), trace, cmdline and symbol. It needs the write scope, GET or not:
// a CPU profile or trace costs the process CPU while it runs, and goroutine dumps show
// its internals.
const pprofPath = "/debug/pprof/*"

func servePprof(c echo.Context) error {
	w, r := c.Response(), c.Request()
	switch name := c.Param("*"); name {
	case "":
		// The index page links to the profiles relative to itself.
		pprof.Index(w, r)
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		// Unknown names are pprof's own 404; only runtime profiles are looked up.
		pprof.Handler(name).ServeHTTP(w, r)
	}
	return nil
}
