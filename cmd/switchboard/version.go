package main

import "runtime/debug"

// version and commit are stamped at build time (scripts/docker-image,
// the release build in docs/deploy.md):
//
//	go build -ldflags "-X main.version=v1.2.0 -X main.commit=$(git rev-parse HEAD)" ./cmd/switchboard
//
// A binary built without them (go install, go build in a checkout) takes
// them from its build information.
var version, commit = "dev", ""

// buildVersion is the version and commit the binary was built from, with
// "+modified" when the checkout had uncommitted changes.
func buildVersion() (v, c string) {
	v, c = version, commit
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v, c
	}
	if v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version // go install …@v1.2.0
	}
	if c == "" {
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				c = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if c != "" && modified {
			c += "+modified"
		}
	}
	return v, c
}

// versionLine is what switchboard version prints.
func versionLine() string {
	v, c := buildVersion()
	if c == "" {
		c = "commit unknown"
	}
	return "switchboard " + v + " (" + c + ")"
}
