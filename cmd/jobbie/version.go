package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// The build's version, commit and date: the Makefile's build sets them
// with -ldflags "-X main.version=… -X main.commit=… -X main.date=…". A
// plain go build leaves them empty, and the version is "dev" with the
// commit and time Go recorded from the checkout, when it did.
var version, commit, date string

// buildInfo is the version, commit and build date of this binary.
type buildInfo struct {
	Version, Commit, Date string
	Modified              bool // the checkout had uncommitted changes (a plain go build's VCS info)
}

func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: date}
	if b.Version == "" {
		b.Version = "dev"
	}
	if b.Commit != "" {
		return b
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line `jobbie version` and `jobbie --version` print.
func (b buildInfo) String() string {
	c := b.Commit
	switch {
	case c == "":
		c = "unknown"
	case len(c) > 12:
		c = c[:12]
	}
	if b.Modified {
		c += "+modified"
	}
	d := b.Date
	if d == "" {
		d = "unknown"
	}
	return fmt.Sprintf("jobbie %s (commit %s, built %s, %s %s/%s)", b.Version, c, d, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print jobbie's version, commit and build date",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout())
		},
	}
}

func printVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, currentBuild())
	return err
}
