package playground

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/core/models"
)

// Deps is what the playground takes from the binary.
type Deps struct {
	// Serve runs the gateway with env until ctx ends, as the serve
	// command does, and returns its exit code.
	Serve func(ctx context.Context, env command.Env, args []string) int
}

// Command is switchboard dev.
func Command(deps Deps) command.Command {
	return command.Command{Name: "dev", Usage: "dev [flags]", Summary: "try it: the gateway with simulated Slack, GitHub, GitLab and Linear", Flags: []command.Flag{{Name: "addr", Value: "ADDR"}, {Name: "gateway-addr", Value: "ADDR"}, {Name: "scripted"}},
		Run: func(ctx context.Context, env command.Env, args []string) int { return run(ctx, deps, env, args) }}
}

// options are dev's flags.
type options struct {
	addr, gatewayAddr string
	scripted          bool
}

func parse(args []string, stdout io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	// Errors are reported once, by run.
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8081", "address of the playground's page (loopback only)")
	fs.StringVar(&o.gatewayAddr, "gateway-addr", "127.0.0.1:8080", "address of the gateway it runs (loopback only)")
	fs.BoolVar(&o.scripted, "scripted", false, "run the scripted demo model even when a model is configured")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, "usage: switchboard dev [flags]\n\nThe gateway on loopback with simulated Slack, GitHub, GitLab and Linear, and a page to use them.\nIts data lives in a temporary directory, removed when it stops.\n\nflags:\n"+command.FlagUsage(fs))
		}
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("dev takes no arguments (got %q)", fs.Args())
	}
	for _, a := range []struct{ flag, addr string }{{"--addr", o.addr}, {"--gateway-addr", o.gatewayAddr}} {
		host, port, err := net.SplitHostPort(a.addr)
		if err != nil || port == "" {
			return o, fmt.Errorf("%s %q: want host:port", a.flag, a.addr)
		}
		if !loopbackHost(host) {
			return o, fmt.Errorf("%s %s: the playground listens on loopback only (127.0.0.1, ::1 or localhost)", a.flag, a.addr)
		}
	}
	return o, nil
}

// needsModel is what dev says when no model is configured.
const needsModel = `switchboard dev: no model is configured, so the agent runs the scripted demo model, which
answers every message the same way (one tool call, then a reply) and says it is scripted.
For real answers set SWITCHBOARD_MODEL=anthropic/<model> with ANTHROPIC_API_KEY, or
openai/<model> with OPENAI_API_KEY or OPENAI_BASE_URL (Ollama, vLLM), and start it again.
`

func run(ctx context.Context, deps Deps, env command.Env, args []string) int {
	o, err := parse(args, env.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, "switchboard dev:", err)
		return 2
	}
	model := modelView{Name: env.Getenv("SWITCHBOARD_MODEL")}
	switch {
	case o.scripted:
		model = modelView{Name: ScriptedModel, Scripted: true}
	case model.Name == "":
		fmt.Fprint(env.Stdout, needsModel)
		model = modelView{Name: ScriptedModel, Scripted: true}
	default:
		if err := models.FromEnv(env.Getenv, nil).Check(model.Name); err != nil {
			fmt.Fprintf(env.Stderr, "switchboard dev: SWITCHBOARD_MODEL: %v (or run switchboard dev --scripted for the demo model)\n", err)
			return 1
		}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A stop asked for (Ctrl-C) while it starts is no failure.
	if err := play(ctx, deps, env, o, model); err != nil && ctx.Err() == nil {
		fmt.Fprintln(env.Stderr, "switchboard dev:", err)
		return 1
	}
	return 0
}

// play runs the simulators, the gateway and the page until ctx ends or
// the gateway stops.
func play(ctx context.Context, deps Deps, env command.Env, o options, model modelView) error {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", o.addr, err)
	}
	defer ln.Close()
	// Found here, under the flag's name, rather than by the gateway under
	// the variable dev sets from it.
	probe, err := net.Listen("tcp", o.gatewayAddr)
	if err != nil {
		return fmt.Errorf("--gateway-addr %s: %w", o.gatewayAddr, err)
	}
	probe.Close()
	dir, err := os.MkdirTemp("", "switchboard-dev-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewTextHandler(env.Stderr, nil))
	p := &process{log: log, dir: dir}
	defer p.close()
	w, err := startWorld(p, model.Scripted)
	if err != nil {
		return err
	}

	dataDir := filepath.Join(dir, "data")
	token := rand.Text() + rand.Text()
	genv := gatewayEnv(env.Environ, w.env(), map[string]string{
		"SWITCHBOARD_ADDR":        o.gatewayAddr,
		"SWITCHBOARD_DATA_DIR":    dataDir,
		"SWITCHBOARD_ADMIN_TOKEN": token,
	}, model.Scripted)
	gctx, stopGateway := context.WithCancel(ctx)
	var code int // the gateway's exit code, once exited is closed
	exited := make(chan struct{})
	go func() { code = deps.Serve(gctx, genv.command(env), nil); close(exited) }()
	// The gateway stops before its data directory is removed, whatever
	// ends dev.
	defer func() { stopGateway(); <-exited }()
	gateway, err := waitGateway(ctx, filepath.Join(dataDir, "addr"), exited, &code)
	if err != nil {
		return err
	}
	w.gateway = gateway
	if err := w.installLinear(ctx); err != nil {
		return err
	}
	pg, err := newPage(w, model, gateway+"/console/", log)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: pg.handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	modelLine := model.Name
	if model.Scripted {
		modelLine = "scripted demo (" + ScriptedModel + ")"
	}
	fmt.Fprintf(env.Stdout, `switchboard dev: the playground is at http://%s/
  gateway  %s (console %s/console/, admin token %s)
  model    %s
  data     %s (removed when dev stops)
Press Ctrl-C to stop.
`, ln.Addr(), gateway, gateway, token, modelLine, dir)
	<-exited
	if code != 0 && ctx.Err() == nil {
		return fmt.Errorf("the gateway stopped (exit %d)", code)
	}
	return nil
}

// startWorld starts the simulators; a fake's fatal error is returned.
func startWorld(p *process, scripted bool) (w *world, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("start the simulators: %s", msg)
		}
	}()
	return newWorld(p, scripted), nil
}

// gatewayVars is the gateway's environment.
type gatewayVars map[string]string

// gatewayEnv is the process's environment without what the playground
// replaces: every platform's variables (a real workspace's token must not
// reach the simulators' gateway), the store (the playground runs on
// bbolt only), the addresses, keys and data directory; with a scripted
// model, the model's too. set goes on top.
func gatewayEnv(environ func() []string, platforms, set map[string]string, scripted bool) gatewayVars {
	out := gatewayVars{}
	if environ != nil {
		for _, kv := range environ() {
			k, v, _ := strings.Cut(kv, "=")
			if !replaced(k, scripted) {
				out[k] = v
			}
		}
	}
	for _, m := range []map[string]string{platforms, set} {
		for k, v := range m {
			out[k] = v
		}
	}
	if scripted && out["SWITCHBOARD_SANDBOX"] == "" {
		out["SWITCHBOARD_SANDBOX"] = "none" // the demo model runs no code
	}
	return out
}

func replaced(name string, scripted bool) bool {
	for _, prefix := range []string{"SLACK_", "LINEAR_", "GITHUB_", "SWITCHBOARD_STORE"} {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	switch name {
	case "SWITCHBOARD_ADDR", "SWITCHBOARD_DATA_DIR", "SWITCHBOARD_PUBLIC_URL", "SWITCHBOARD_ADMIN_TOKEN", "SWITCHBOARD_MASTER_KEY":
		return true
	}
	return scripted && (name == "SWITCHBOARD_MODEL" || strings.HasPrefix(name, "ANTHROPIC_") || strings.HasPrefix(name, "OPENAI_"))
}

// command is the gateway's view of the process.
func (g gatewayVars) command(env command.Env) command.Env {
	return command.Env{
		Getenv: func(k string) string { return g[k] },
		Environ: func() []string {
			out := make([]string, 0, len(g))
			for k, v := range g {
				out = append(out, k+"="+v)
			}
			return out
		},
		Stdin: strings.NewReader(""), Stdout: env.Stdout, Stderr: env.Stderr,
	}
}

// gatewayPatience bounds the gateway's start.
const gatewayPatience = 2 * time.Minute

// waitGateway waits until the gateway has written the address it bound
// and answers /readyz, and returns its URL; code is the gateway's exit
// code once exited is closed.
func waitGateway(ctx context.Context, addrFile string, exited <-chan struct{}, code *int) (string, error) {
	deadline := time.Now().Add(gatewayPatience)
	url := ""
	for {
		select {
		case <-exited:
			return "", fmt.Errorf("the gateway stopped as it started (exit %d)", *code)
		case <-ctx.Done():
			return "", ctx.Err()
		default:
		}
		if url == "" {
			b, err := os.ReadFile(addrFile)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
			if err == nil {
				url = "http://" + strings.TrimSpace(string(b))
			}
		}
		if url != "" {
			if resp, err := http.Get(url + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return url, nil
				}
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the gateway did not answer within %s", gatewayPatience)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
