package main_test

import (
	"bufio"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/modelserver"
	"github.com/switchboardhq/switchboard/sessions/store/postgres/pgtest"
)

// TestReplicasScript runs scripts/two-replicas, the set-up docs/postgres.md
// shows: both replicas answer /readyz, a session created through one is
// read through the other (its turn answered), and the script stops both when it is stopped.
func TestReplicasScript(t *testing.T) {
	dsn := pgtest.DSN(t)
	ms, hs := modelserver.Start(t)
	ms.Push(modelserver.Step{Text: "hello from one of two"})
	cmd := exec.Command("../../scripts/two-replicas")
	cmd.Env = os.Environ()
	for k, v := range modelEnv(hs.URL, modelserver.FormatAnthropic) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env,
		"SWITCHBOARD_STORE="+dsn,
		"SWITCHBOARD_BIN="+serveBinary(t),
		"SWITCHBOARD_MASTER_KEY="+replicaMasterKey,
		"SWITCHBOARD_ADMIN_TOKEN="+adminToken,
		"REPLICA_A_ADDR=127.0.0.1:0",
		"REPLICA_B_ADDR=127.0.0.1:0",
		"REPLICAS_DIR="+t.TempDir(),
	)
	// Its own process group, so that a failed test can end the replicas
	// with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })

	urls := map[string]string{}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	timeout := time.After(patience)
	for len(urls) < 2 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("the script ended before both replicas were ready:\n%s", stderr.String())
			}
			if name, url, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(name, "replica ") {
				urls[strings.TrimPrefix(name, "replica ")] = url
			}
		case <-timeout:
			t.Fatalf("the replicas were not ready in %v:\n%s", patience, stderr.String())
		}
	}
	a, b := &server{t: t, url: urls["a"]}, &server{t: t, url: urls["b"]}
	for name, s := range map[string]*server{"a": a, "b": b} {
		if code, raw := s.do("GET", "/readyz", nil); code != 200 {
			t.Fatalf("replica %s /readyz: %d %s", name, code, raw)
		}
	}
	id := a.createSession("hello")
	_, evs := b.waitIdle(id)
	checkLog(t, evs)
	if !logHolds(evs, "hello from one of two") {
		t.Fatalf("the session made on a, read on b: %v", types(evs))
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(patience):
		t.Fatalf("the script did not stop on SIGTERM:\n%s", stderr.String())
	}
	for name, s := range map[string]*server{"a": a, "b": b} {
		if resp, err := http.Get(s.url + "/healthz"); err == nil {
			resp.Body.Close()
			t.Fatalf("replica %s still answers after the script stopped", name)
		}
	}
}
