package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// patience bounds every wait on the gateway: generous, since a busy
// machine is slow, and reached only when something is wrong.
const patience = 90 * time.Second

// gateway is the `switchboard serve` under test, killed and restarted on
// one data dir; its address changes with each start.
type gateway struct {
	bin, dataDir, logPath string
	env                   []string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	url    string
	starts int
}

// build compiles the gateway with the test tools into dir.
func build(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find the module: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run the soak inside the switchboard module, or give -bin")
	}
	bin := filepath.Join(dir, "switchboard")
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", "switchboard_testtools", "-o", bin, "./cmd/switchboard")
	cmd.Dir = filepath.Dir(mod)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build switchboard: %w", err)
	}
	return bin, nil
}

// start runs serve and waits until it answers /healthz.
func (g *gateway) start() error {
	addrFile := filepath.Join(g.dataDir, "addr")
	// The address file of the killed process is stale.
	if err := os.Remove(addrFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	logf, err := os.OpenFile(g.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	fmt.Fprintf(logf, "==== start %d at %s\n", g.starts+1, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(g.bin, "serve")
	cmd.Env = append(os.Environ(), g.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	g.mu.Lock()
	g.cmd, g.exited, g.url = cmd, exited, ""
	g.starts++
	g.mu.Unlock()

	deadline := time.Now().Add(patience)
	var url string
	for url == "" {
		select {
		case <-exited:
			return fmt.Errorf("serve exited at start (log %s)", g.logPath)
		default:
		}
		if b, err := os.ReadFile(addrFile); err == nil {
			url = "http://" + strings.TrimSpace(string(b))
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("serve wrote no %s (log %s)", addrFile, g.logPath)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("serve exited at start (log %s)", g.logPath)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("serve did not answer /healthz (log %s)", g.logPath)
		}
		time.Sleep(20 * time.Millisecond)
	}
	g.mu.Lock()
	g.url = url
	g.mu.Unlock()
	return nil
}

// kill sends SIGKILL and waits until the process is gone.
func (g *gateway) kill() {
	g.mu.Lock()
	cmd, exited := g.cmd, g.exited
	g.url = ""
	g.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// URL is the running process's base URL, "" while it is down.
func (g *gateway) URL() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.url
}

// quit sends SIGQUIT, on which the Go runtime writes every goroutine's
// stack to the log, and waits until the process is gone.
func (g *gateway) quit() {
	g.mu.Lock()
	cmd, exited := g.cmd, g.exited
	g.url = ""
	g.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGQUIT)
	<-exited
}
