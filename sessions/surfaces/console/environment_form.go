package console

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// environmentFields are the environment body's fields an API refusal may
// name, as its messages spell them.
var environmentFields = []string{
	"name", "description", "image",
	"packages.apt", "packages.pip", "packages.npm", "packages.go", "packages.cargo", "packages.gem",
	"env", "network.mode", "network.allowed_hosts", "credentials",
	"resources.cpus", "resources.memory_mb", "resources.pids", "resources.disk_mb",
	"idle_timeout_seconds", "metadata",
}

// packageManagers are the package lists the form has, in install order.
var packageManagers = []string{"apt", "pip", "npm", "go", "cargo", "gem"}

// environmentForm is the environment form as typed.
type environmentForm struct {
	Name, Description, Image string
	// Packages by manager, separated by spaces or lines.
	Packages map[string]string
	// Env and Metadata as NAME=value lines.
	Env, Metadata string
	Mode          string
	// AllowedHosts and Credentials separated by spaces or lines.
	AllowedHosts, Credentials              string
	CPUs, MemoryMB, Pids, DiskMB, IdleSecs string
}

func environmentFormOf(e *core.Environment) environmentForm {
	f := environmentForm{
		Name: e.Name, Description: e.Description, Image: e.Image, Packages: map[string]string{},
		Env: keyValueText(e.Env), Metadata: keyValueText(e.Metadata), Mode: e.Network.Mode,
		AllowedHosts: strings.Join(e.Network.AllowedHosts, "\n"), Credentials: strings.Join(e.Credentials, "\n"),
		MemoryMB: numberText(int64(e.Resources.MemoryMB)), Pids: numberText(int64(e.Resources.Pids)),
		DiskMB: numberText(int64(e.Resources.DiskMB)), IdleSecs: numberText(int64(e.IdleTimeoutSeconds)),
	}
	if e.Resources.CPUs != 0 {
		f.CPUs = strconv.FormatFloat(e.Resources.CPUs, 'g', -1, 64)
	}
	for _, m := range e.Packages.Managers() {
		f.Packages[m.Manager] = strings.Join(m.Packages, " ")
	}
	return f
}

func readEnvironmentForm(v url.Values) environmentForm {
	f := environmentForm{
		Name: strings.TrimSpace(v.Get("name")), Description: v.Get("description"), Image: strings.TrimSpace(v.Get("image")),
		Packages: map[string]string{}, Env: v.Get("env"), Metadata: v.Get("metadata"), Mode: v.Get("mode"),
		AllowedHosts: v.Get("allowed_hosts"), Credentials: v.Get("credentials"),
		CPUs: v.Get("cpus"), MemoryMB: v.Get("memory_mb"), Pids: v.Get("pids"), DiskMB: v.Get("disk_mb"), IdleSecs: v.Get("idle_timeout_seconds"),
	}
	for _, m := range packageManagers {
		f.Packages[m] = v.Get(m)
	}
	return f
}

// params is the API body the form stands for: every field, so emptied
// ones clear what was stored; or what the console could not read under
// its field.
func (f environmentForm) params() (client.EnvironmentParams, formErrors) {
	fe := formErrors{Fields: map[string]string{}}
	pk := core.Packages{
		Apt: strings.Fields(f.Packages["apt"]), Pip: strings.Fields(f.Packages["pip"]), Npm: strings.Fields(f.Packages["npm"]),
		Go: strings.Fields(f.Packages["go"]), Cargo: strings.Fields(f.Packages["cargo"]), Gem: strings.Fields(f.Packages["gem"]),
	}
	env, err := readKeyValues(f.Env)
	if err != nil {
		fe.Fields["env"] = err.Error()
	}
	md, err := readKeyValues(f.Metadata)
	if err != nil {
		fe.Fields["metadata"] = err.Error()
	}
	mode := f.Mode
	if mode == "" {
		mode = core.NetworkNone
	}
	network := core.NetworkPolicy{Mode: mode, AllowedHosts: strings.Fields(f.AllowedHosts)}
	creds := strings.Fields(f.Credentials)
	res := core.Resources{
		MemoryMB: int(readNumber(fe, "resources.memory_mb", f.MemoryMB)),
		Pids:     int(readNumber(fe, "resources.pids", f.Pids)),
		DiskMB:   int(readNumber(fe, "resources.disk_mb", f.DiskMB)),
	}
	if s := strings.TrimSpace(f.CPUs); s != "" {
		if res.CPUs, err = strconv.ParseFloat(s, 64); err != nil {
			fe.Fields["resources.cpus"] = fmt.Sprintf("%q is not a number; leave it empty for the default", s)
		}
	}
	idle := int(readNumber(fe, "idle_timeout_seconds", f.IdleSecs))
	if len(fe.Fields) == 0 {
		fe.Fields = nil
	}
	return client.EnvironmentParams{
		Name: &f.Name, Description: &f.Description, Image: &f.Image, Packages: &pk, Env: &env, Network: &network,
		Credentials: &creds, Resources: &res, IdleTimeoutSeconds: &idle, Metadata: &md,
	}, fe
}
