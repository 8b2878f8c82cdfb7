// Package version says which build of irqnuma is running: the version
// stamped at link time (make build passes -X .../version.version=...), or
// else what the Go toolchain recorded of the module and its VCS checkout.
package version

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// version and revision are set by the linker (make build): -ldflags "-X
// github.com/irqnuma/irqnuma/internal/version.version=v1.2.3 -X ...revision=<commit>".
var version, revision string

// Info is one build.
type Info struct {
	Version   string // "v1.2.3", "v1.2.3-4-gabcdef0-dirty", or "(devel)"
	Revision  string // VCS commit, "" when unknown
	Modified  bool   // built from a checkout with uncommitted changes
	GoVersion string
}

var (
	once sync.Once
	info Info
)

// Get returns this build's Info.
func Get() Info {
	once.Do(func() {
		info = Info{Version: version, Revision: revision, GoVersion: runtime.Version()}
		bi, ok := debug.ReadBuildInfo()
		if !ok {
			if info.Version == "" {
				info.Version = "(devel)"
			}
			return
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Revision == "" {
					info.Revision = s.Value
				}
			case "vcs.modified":
				info.Modified = s.Value == "true"
			}
		}
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
		if info.Version == "" {
			info.Version = "(devel)"
		}
	})
	return info
}

// String is the one line `irqnuma --version` prints.
func (i Info) String() string {
	s := "irqnuma " + i.Version
	if i.Revision != "" {
		rev := i.Revision
		if len(rev) > 12 {
			rev = rev[:12]
		}
		s += " (" + rev
		if i.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + i.GoVersion
}
