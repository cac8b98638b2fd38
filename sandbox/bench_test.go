package sandbox

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/sandbox/hands"
)

// Each benchmark times the hands path and, in the same loop, the raw
// docker CLI doing the same thing, and reports both and their ratio.
// Targets: warm ≤ 1.3× docker exec, cold ≤ 1.2× docker run.
//
//	go test ./sandbox/ -run XXX -bench . -benchtime 50x

func dockerCLI(b *testing.B) string {
	path, err := exec.LookPath("docker")
	if err != nil {
		b.Skip("no docker CLI for the baseline")
	}
	return path
}

func report(b *testing.B, n int, ours, base time.Duration, oursName, baseName string) {
	if n == 0 {
		return
	}
	b.ReportMetric(float64(ours.Microseconds())/1000/float64(n), oursName+"_ms/op")
	b.ReportMetric(float64(base.Microseconds())/1000/float64(n), baseName+"_ms/op")
	b.ReportMetric(float64(ours)/float64(base), "ratio")
}

// BenchmarkWarmExec: the bash tool in a warm sandbox against docker exec of
// the same command in the same container.
func BenchmarkWarmExec(b *testing.B) {
	docker := dockerCLI(b)
	d := newDocker(b)
	tools := hands.Tools(d, hands.Options{})
	s := newSession()
	tool(b, tools, s, "bash", map[string]any{"command": "true"})
	id, _ := containerState(b, d, s)
	const command = "echo hi"
	var ours, base time.Duration
	n := 0
	for b.Loop() {
		start := time.Now()
		res := tool(b, tools, s, "bash", map[string]any{"command": command})
		ours += time.Since(start)
		if res.Output != "hi\n" {
			b.Fatalf("bash tool: %+v", res)
		}
		start = time.Now()
		out, err := exec.Command(docker, "exec", "-u", d.cfg.User, id, "bash", "-c", command).Output()
		base += time.Since(start)
		if err != nil || string(out) != "hi\n" {
			b.Fatalf("docker exec: %v %q", err, out)
		}
		n++
	}
	report(b, n, ours, base, "hands", "docker_exec")
}

// BenchmarkColdStart: a session's first command (creating its workspace
// and container, starting it, running the command) against docker run
// --rm of the same command on the same network.
func BenchmarkColdStart(b *testing.B) {
	docker := dockerCLI(b)
	d := newDocker(b)
	tools := hands.Tools(d, hands.Options{})
	ctx := context.Background()
	// A first sandbox, so that the image is warm in the engine's caches.
	warm := newSession()
	tool(b, tools, warm, "bash", map[string]any{"command": "true"})
	network := d.cfg.networkName()
	const command = "echo hi"
	var ours, base time.Duration
	n := 0
	for b.Loop() {
		s := newSession()
		start := time.Now()
		res := tool(b, tools, s, "bash", map[string]any{"command": command})
		ours += time.Since(start)
		if res.Output != "hi\n" {
			b.Fatalf("bash tool: %+v", res)
		}
		start = time.Now()
		out, err := exec.Command(docker, "run", "--rm", "--network", network, "-u", d.cfg.User, d.cfg.Image, "bash", "-c", command).CombinedOutput()
		base += time.Since(start)
		if err != nil || strings.TrimSpace(string(out)) != "hi" {
			b.Fatalf("docker run: %v %q", err, out)
		}
		n++
		b.StopTimer()
		if err := d.Remove(ctx, s); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	report(b, n, ours, base, "hands", "docker_run")
}
