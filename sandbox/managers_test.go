package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeregistry"
	"github.com/switchboardhq/switchboard/fixtures/sandboximage"
)

// TestEnvironmentManagers: an environment's pip, go, cargo and gem
// packages each install from the registry the gateway names for the
// manager (a fake one on the host, reached through the proxy, serving a
// package built here) into an image with the managers from Debian, and
// the package runs in the sandbox. A package the registry lacks fails
// the build with an error naming it and ending with the manager's
// account; an image without the manager, with one naming what brings it.
func TestEnvironmentManagers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image with four package managers and installs from each: not in -short")
	}
	image := sandboximage.ForTestManagers(t)
	host := sandboximage.HostBridgeAddress(t)
	pypi := fakeregistry.PyPI(t, host, "hello_pip", "1.0.0", "hello from pip")
	goproxy := fakeregistry.GoProxy(t, host, "example.com/hello-go", "v1.0.0", "hello from go")
	crates := fakeregistry.Cargo(t, host, "hello-cargo", "1.0.0", "hello from cargo")
	gems := fakeregistry.Gem(t, host, image, "hello-gem", "1.0.0", "hello from gem")
	d, s := newEgressDocker(t, func(c *Config, _ *egressSetup) {
		c.Egress.PipIndex = pypi.URL
		c.Egress.GoProxy = goproxy.URL
		c.Egress.CargoIndex = crates.URL
		c.Egress.GemSource = gems.URL
	})
	for _, tc := range []struct {
		manager  string
		packages core.Packages
		registry *fakeregistry.Registry
		run      string
		want     string
	}{
		{"pip", core.Packages{Pip: []string{"hello-pip"}}, pypi, `python3 -c 'import hello_pip; print(hello_pip.greet())'`, "hello from pip\n"},
		{"go", core.Packages{Go: []string{"example.com/hello-go@v1.0.0"}}, goproxy, "hello-go", "hello from go\n"},
		{"cargo", core.Packages{Cargo: []string{"hello-cargo"}}, crates, "hello-cargo", "hello from cargo\n"},
		{"gem", core.Packages{Gem: []string{"hello-gem"}}, gems, "hello-gem", "hello from gem\n"},
	} {
		t.Run(tc.manager, func(t *testing.T) {
			session := newSession()
			s.envs.set(session, &core.Environment{Name: tc.manager, Image: image, Packages: tc.packages})
			start := time.Now()
			r := sh(t, d, session, tc.run)
			t.Logf("built the image and ran the package in %s", time.Since(start).Round(time.Millisecond))
			if r.ExitCode != 0 || string(r.Stdout) != tc.want {
				t.Fatalf("the package: exit %d %q %q; the registry was asked %v", r.ExitCode, r.Stdout, r.Stderr, tc.registry.Gets())
			}
		})
	}

	t.Run("no manager", func(t *testing.T) {
		session := newSession()
		s.envs.set(session, &core.Environment{Name: "no-gem", Image: sandboximage.ForTest(t), Packages: core.Packages{Gem: []string{"hello-gem"}}})
		_, err := d.Exec(context.Background(), session, core.ExecRequest{Cmd: []string{"true"}})
		if err == nil || !strings.Contains(err.Error(), "gem packages need gem in the image (apt can bring it: ruby)") {
			t.Fatalf("an environment with gem packages on an image without Ruby: %v", err)
		}
	})

	t.Run("missing", func(t *testing.T) {
		session := newSession()
		s.envs.set(session, &core.Environment{Name: "missing", Image: image, Packages: core.Packages{Pip: []string{"no-such-package"}}})
		_, err := d.Exec(context.Background(), session, core.ExecRequest{Cmd: []string{"true"}})
		if err == nil {
			t.Fatal("an environment with a package its registry lacks started")
		}
		for _, want := range []string{"pip could not install no-such-package", "No matching distribution found for no-such-package"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the build's error lacks %q:\n%v", want, err)
			}
		}
	})
}
