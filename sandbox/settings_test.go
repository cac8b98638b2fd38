package sandbox

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/sandbox/egress"
)

// defaults are the values of Options as a command parses them when
// nothing is set.
func defaults(t *testing.T) settings.Values {
	t.Helper()
	v := settings.Values{}
	for _, o := range Options() {
		if !strings.HasPrefix(o.Env, "SWITCHBOARD_SANDBOX") && !strings.HasPrefix(o.Env, "SWITCHBOARD_EGRESS") {
			t.Errorf("option %s is not the sandbox's", o.Env)
		}
		v[o.Env] = o.Default
	}
	return v
}

func TestLoadSettingsDefaults(t *testing.T) {
	dir := t.TempDir()
	s, err := LoadSettings(defaults(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{image: "switchboard-sandbox:latest", idle: 5 * time.Minute, command: 10 * time.Minute, build: 15 * time.Minute,
		limits: Limits{MemoryBytes: 2 << 30, Pids: 512, NanoCPUs: 1e9}, dataDir: dir, egressPort: 3128, egressConns: 256}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v\nwant %+v", s, want)
	}
}

func TestLoadSettingsPrivateHosts(t *testing.T) {
	v := defaults(t)
	v["SWITCHBOARD_EGRESS_PRIVATE_HOSTS"] = " gitlab.internal, ,git.corp.example "
	s, err := LoadSettings(v, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"gitlab.internal", "git.corp.example"}; !reflect.DeepEqual(s.privateHosts, want) {
		t.Errorf("private hosts %q, want %q", s.privateHosts, want)
	}
}

// TestLoadSettingsErrors: a wrong value fails with one line that names
// its variable, in these exact words.
func TestLoadSettingsErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		name string
		set  map[string]string
		want string
	}{
		{"an unknown mode", map[string]string{"SWITCHBOARD_SANDBOX": "podman"}, `SWITCHBOARD_SANDBOX="podman": want docker or none`},
		{"no image", map[string]string{"SWITCHBOARD_SANDBOX_IMAGE": ""}, `SWITCHBOARD_SANDBOX_IMAGE="": want an image name`},
		{"no image for docker", map[string]string{"SWITCHBOARD_SANDBOX": "docker", "SWITCHBOARD_SANDBOX_IMAGE": ""}, `SWITCHBOARD_SANDBOX_IMAGE="": want an image name`},
		{"a zero idle timeout", map[string]string{"SWITCHBOARD_SANDBOX_IDLE_SECONDS": "0"}, `SWITCHBOARD_SANDBOX_IDLE_SECONDS="0": want a whole number ≥ 1`},
		{"a negative command timeout", map[string]string{"SWITCHBOARD_SANDBOX_COMMAND_SECONDS": "-1"}, `SWITCHBOARD_SANDBOX_COMMAND_SECONDS="-1": want a whole number ≥ 1`},
		{"a build timeout in words", map[string]string{"SWITCHBOARD_SANDBOX_BUILD_SECONDS": "long"}, `SWITCHBOARD_SANDBOX_BUILD_SECONDS="long": want a whole number ≥ 1`},
		{"memory in words", map[string]string{"SWITCHBOARD_SANDBOX_MEMORY_MB": "lots"}, `SWITCHBOARD_SANDBOX_MEMORY_MB="lots": want a whole number ≥ 16`},
		{"too few pids", map[string]string{"SWITCHBOARD_SANDBOX_PIDS": "3"}, `SWITCHBOARD_SANDBOX_PIDS="3": want a whole number ≥ 16`},
		{"no cpu", map[string]string{"SWITCHBOARD_SANDBOX_CPUS": "0"}, `SWITCHBOARD_SANDBOX_CPUS="0": want a number from 0.01 to 1024`},
		{"an unknown egress mode", map[string]string{"SWITCHBOARD_EGRESS": "maybe"}, `SWITCHBOARD_EGRESS="maybe": want on or off`},
		{"a port out of range", map[string]string{"SWITCHBOARD_EGRESS_PORT": "70000"}, `SWITCHBOARD_EGRESS_PORT="70000": want a port from 1 to 65535`},
		{"a port in words", map[string]string{"SWITCHBOARD_EGRESS_PORT": "proxy"}, `SWITCHBOARD_EGRESS_PORT="proxy": want a port from 1 to 65535`},
		{"no egress connections", map[string]string{"SWITCHBOARD_EGRESS_MAX_CONNECTIONS": "0"}, `SWITCHBOARD_EGRESS_MAX_CONNECTIONS="0": want a whole number ≥ 1`},
		{"allow private in words", map[string]string{"SWITCHBOARD_EGRESS_ALLOW_PRIVATE": "yes please"}, `SWITCHBOARD_EGRESS_ALLOW_PRIVATE="yes please": want true or false`},
		{"a missing CA file", map[string]string{"SWITCHBOARD_EGRESS_CA_FILE": missing}, "SWITCHBOARD_EGRESS_CA_FILE: open " + missing + ": no such file or directory"},
		{"a Go proxy that is not a URL", map[string]string{"SWITCHBOARD_SANDBOX_GOPROXY": "direct"}, `SWITCHBOARD_SANDBOX_GOPROXY="direct": want an http(s) URL`},
		{"a CA file without PEM", map[string]string{"SWITCHBOARD_EGRESS_CA_FILE": notPEM}, "SWITCHBOARD_EGRESS_CA_FILE=" + notPEM + ": no PEM certificate in it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := defaults(t)
			for k, val := range tt.set {
				v[k] = val
			}
			_, err := LoadSettings(v, dir)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("err = %v, want %s", err, tt.want)
			}
		})
	}
}

func TestLoadSettings(t *testing.T) {
	dir := t.TempDir()
	ca, err := egress.LoadOrCreateCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, egress.CACertFile)
	tests := []struct {
		name  string
		set   map[string]string
		check func(t *testing.T, s Settings)
	}{
		{"none needs no image", map[string]string{"SWITCHBOARD_SANDBOX": "none", "SWITCHBOARD_SANDBOX_IMAGE": ""}, func(t *testing.T, s Settings) {
			if s.mode != "none" {
				t.Errorf("mode = %q", s.mode)
			}
		}},
		{"limits in their units", map[string]string{"SWITCHBOARD_SANDBOX_MEMORY_MB": "256", "SWITCHBOARD_SANDBOX_PIDS": "64", "SWITCHBOARD_SANDBOX_CPUS": "0.5"}, func(t *testing.T, s Settings) {
			if want := (Limits{MemoryBytes: 256 << 20, Pids: 64, NanoCPUs: 5e8}); s.limits != want {
				t.Errorf("limits = %+v, want %+v", s.limits, want)
			}
		}},
		{"egress on a port, private allowed", map[string]string{"SWITCHBOARD_EGRESS": "on", "SWITCHBOARD_EGRESS_PORT": "8128", "SWITCHBOARD_EGRESS_ALLOW_PRIVATE": "true"}, func(t *testing.T, s Settings) {
			if s.egress != "on" || s.egressPort != 8128 || !s.allowPrivate {
				t.Errorf("egress %q port %d allow private %v", s.egress, s.egressPort, s.allowPrivate)
			}
		}},
		{"registries of every manager", map[string]string{"SWITCHBOARD_SANDBOX_PIP_INDEX": "https://pypi.example.com/simple/", "SWITCHBOARD_SANDBOX_GOPROXY": "https://go.example.com",
			"SWITCHBOARD_SANDBOX_CARGO_INDEX": "https://cargo.example.com/index/", "SWITCHBOARD_SANDBOX_GEM_SOURCE": "https://gems.example.com/"}, func(t *testing.T, s Settings) {
			got := [4]string{s.pipIndex, s.goProxy, s.cargoIndex, s.gemSource}
			if want := [4]string{"https://pypi.example.com/simple/", "https://go.example.com", "https://cargo.example.com/index/", "https://gems.example.com/"}; got != want {
				t.Errorf("registries %q, want %q", got, want)
			}
		}},
		{"an extra root", map[string]string{"SWITCHBOARD_EGRESS_CA_FILE": caFile}, func(t *testing.T, s Settings) {
			if s.roots == nil {
				t.Fatal("no root pool")
			}
			block, _ := pem.Decode(ca.CertPEM())
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cert.Verify(x509.VerifyOptions{Roots: s.roots}); err != nil {
				t.Errorf("the extra root is not trusted: %v", err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := defaults(t)
			for k, val := range tt.set {
				v[k] = val
			}
			s, err := LoadSettings(v, dir)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, s)
		})
	}
}
