// Package console serves the console: its front end, a React app built
// by Vite from src/ into dist/ (`make console`) and embedded in the
// binary, under /console/, and its session endpoints under
// /console/api/. The front end calls /api/v1 like any client, with the
// session cookie in place of a key (admission.Sessions). Without a built
// front end (a plain `go build`), /console/ answers a page saying how to
// build it.
package console
