// Command soak is the chaos soak: it drives a real `switchboard serve`
// with the fake Slack, GitHub and Linear and the scripted model server —
// signed platform triggers, API sessions, steering, interrupts, outbound
// webhooks to a receiver that fails a fraction of the time, platform rate
// limits — while it SIGKILLs and restarts serve at random (seeded)
// points. Then it checks, from the fakes' records and the API, that no
// acknowledged input was lost or doubled, every turn ended, every answer
// reached its platform exactly once and every event was delivered in
// order, and that the gateway holds no leaked goroutines or sandboxes.
// It prints the figures and exits 1 on any violation.
//
//	go run ./cmd/soak -duration 10m -seed 7
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type config struct {
	ctx         context.Context
	duration    time.Duration
	seed        uint64
	rate        float64
	killMin     time.Duration
	killMax     time.Duration
	hookFailure float64
	docker      bool
	bin         string
	keep        bool
	stacks      bool
	dir         string
	replicas    int
	postgres    string
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the soak; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := config{ctx: ctx}
	fs.DurationVar(&cfg.duration, "duration", 60*time.Second, "how long traffic and kills go on")
	fs.Uint64Var(&cfg.seed, "seed", uint64(time.Now().UnixNano()), "seed of every random choice (printed, to repeat a run)")
	fs.Float64Var(&cfg.rate, "rate", 6, "inputs per second, about")
	fs.DurationVar(&cfg.killMin, "kill-min", 3*time.Second, "least time between two SIGKILLs")
	fs.DurationVar(&cfg.killMax, "kill-max", 10*time.Second, "most time between two SIGKILLs")
	fs.Float64Var(&cfg.hookFailure, "hook-failure", 0.2, "fraction of webhook deliveries the receiver fails with a 503")
	fs.BoolVar(&cfg.docker, "docker", false, "run sandboxes in Docker (SWITCHBOARD_SANDBOX=docker) and check none is left running")
	fs.StringVar(&cfg.bin, "bin", "", "switchboard binary built with -tags switchboard_testtools (default: build it)")
	fs.StringVar(&cfg.dir, "dir", "", "working directory: data dir and serve.log (default: a temporary one)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the working directory")
	fs.BoolVar(&cfg.stacks, "stacks", false, "at the end, SIGQUIT serve so that serve.log holds every goroutine's stack")
	fs.IntVar(&cfg.replicas, "replicas", 1, "replicas of serve on one PostgreSQL store (-postgres); traffic goes to either, and kills take either")
	fs.StringVar(&cfg.postgres, "postgres", "", "the PostgreSQL DSN the replicas share (an empty schema: the soak checks every session in it)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if cfg.killMin <= 0 || cfg.killMax < cfg.killMin || cfg.rate <= 0 || cfg.duration <= 0 {
		fmt.Fprintln(stderr, "soak: want -duration > 0, -rate > 0 and 0 < -kill-min ≤ -kill-max")
		return 2
	}
	if cfg.replicas < 1 || (cfg.replicas > 1 && cfg.postgres == "") {
		fmt.Fprintln(stderr, "soak: want -replicas ≥ 1, and -postgres with more than one")
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if cfg.dir == "" {
		dir, err := os.MkdirTemp("", "switchboard-soak-")
		if err != nil {
			fmt.Fprintln(stderr, "soak:", err)
			return 1
		}
		cfg.dir = dir
		if !cfg.keep {
			defer func() {
				if code == 0 {
					os.RemoveAll(dir)
				}
			}()
		}
	}
	tb := &fixtureTB{log: log}
	defer tb.close()
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(fatal)
			if !ok {
				panic(r)
			}
			fmt.Fprintf(stderr, "soak: %s (serve's logs in %s)\n", f, cfg.dir)
			code = 1
		}
	}()
	fmt.Fprintf(stdout, "soak: seed %d, %v, working directory %s\n", cfg.seed, cfg.duration, cfg.dir)
	w, err := newWorld(cfg, tb, cfg.dir)
	if err != nil {
		fmt.Fprintf(stderr, "soak: %v (serve's logs in %s)\n", err, cfg.dir)
		return 1
	}
	f, err := w.soak(log)
	if err != nil {
		fmt.Fprintf(stderr, "soak: %v (serve's logs in %s)\n", err, cfg.dir)
		return 1
	}
	report(stdout, f)
	if len(f.Violations) > 0 {
		fmt.Fprintf(stdout, "soak: FAILED, %d violations (seed %d; serve's logs in %s)\n", len(f.Violations), cfg.seed, cfg.dir)
		return 1
	}
	fmt.Fprintln(stdout, "soak: ok")
	return 0
}

// soak runs the traffic and the kills, lets the gateway drain, and checks.
func (w *world) soak(log *slog.Logger) (*figures, error) {
	goroutinesStart, err := w.goroutines()
	if err != nil {
		return nil, err
	}
	l := &ledger{accepted: map[string]string{}}
	ctx, cancel := context.WithTimeout(w.cfg.ctx, w.cfg.duration)
	defer cancel()
	const drivers = 3
	gap := time.Duration(float64(time.Second) * drivers / w.cfg.rate)
	var wg sync.WaitGroup
	for i := range drivers {
		rnd := rand.New(rand.NewPCG(w.cfg.seed, uint64(i)))
		wg.Go(func() { w.drive(ctx, l, rnd, gap) })
	}
	kills := 0
	rnd := rand.New(rand.NewPCG(w.cfg.seed, 1000))
	var restartErr error
	for restartErr == nil {
		wait := w.cfg.killMin + time.Duration(rnd.Int64N(int64(w.cfg.killMax-w.cfg.killMin)+1))
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		if ctx.Err() != nil {
			break
		}
		var replica int
		replica, restartErr = w.gw.killOne()
		kills++
		log.Info("soak: killed serve", "replica", replica+1, "kills", kills, "inputs", l.count())
	}
	cancel()
	wg.Wait()
	if restartErr != nil {
		return nil, restartErr
	}
	if w.cfg.ctx.Err() != nil {
		return nil, w.cfg.ctx.Err()
	}
	log.Info("soak: traffic over, draining", "inputs", l.count(), "kills", kills)

	// Drain: wait (bounded) until the checks pass, then take the last look.
	var f *figures
	for deadline := time.Now().Add(3 * patience); ; time.Sleep(time.Second) {
		s, err := w.snapshot()
		if err != nil {
			return nil, err
		}
		f = w.check(l, s)
		if len(f.Violations) == 0 || time.Now().After(deadline) {
			break
		}
	}
	f.Kills, f.Starts = kills, w.gw.starts()
	f.GoroutinesStart = goroutinesStart

	// One idle timeout later nothing may be left behind.
	time.Sleep(idleSeconds*time.Second + time.Second)
	for deadline := time.Now().Add(patience / 3); ; time.Sleep(500 * time.Millisecond) {
		n, err := w.goroutines()
		if err != nil {
			return nil, err
		}
		f.GoroutinesEnd = n
		if n <= goroutinesStart+20 || time.Now().After(deadline) {
			break
		}
	}
	if w.cfg.stacks {
		w.gw.quitAll()
	}
	if f.GoroutinesEnd > goroutinesStart+20 {
		f.violate("go_goroutines %d at rest, %d at the start", f.GoroutinesEnd, goroutinesStart)
	}
	if w.cfg.docker {
		running, err := containers()
		if err != nil {
			return nil, err
		}
		mine := map[string]bool{}
		s, err := w.snapshot()
		if err != nil {
			return nil, err
		}
		for _, ses := range s.sessions {
			mine[ses.ID] = true
		}
		for _, id := range running {
			if mine[id] {
				f.violate("session %s is at rest and its sandbox container runs", id)
			}
		}
	}
	return f, nil
}

// goroutines is go_goroutines of the running replicas, summed, with no
// connection held open on either side.
func (w *world) goroutines() (int, error) {
	w.closeConns()
	time.Sleep(200 * time.Millisecond)
	total := 0.0
	for _, u := range w.gw.URLs() {
		n, err := w.metricAt(u, "go_goroutines")
		if err != nil {
			return 0, err
		}
		total += n
	}
	return int(total), nil
}

func report(out io.Writer, f *figures) {
	fmt.Fprintf(out, "inputs acknowledged   %d (refused %d, unanswered %d), interrupts %d, rate limits armed %d\n",
		f.Inputs, f.Refused, f.Unanswered, f.Interrupts, f.RateLimits)
	fmt.Fprintf(out, "kills                 %d (starts %d)\n", f.Kills, f.Starts)
	fmt.Fprintf(out, "sessions              %d, turns %d, left open %d\n", f.Sessions, f.Turns, f.OpenTurns)
	fmt.Fprintf(out, "answers               %d in platform sessions' logs, %d posted\n", f.Answers, f.Posted)
	fmt.Fprintf(out, "deliveries            %d accepted, %d failed by the receiver\n", f.Deliveries, f.DeliveryFailures)
	fmt.Fprintf(out, "goroutines            %d at the start, %d at rest\n", f.GoroutinesStart, f.GoroutinesEnd)
	fmt.Fprintf(out, "lost                  %d\n", f.Lost)
	fmt.Fprintf(out, "doubled               %d\n", f.Doubled)
	for i, v := range f.Violations {
		if i == 50 {
			fmt.Fprintf(out, "… and %d more\n", len(f.Violations)-50)
			break
		}
		fmt.Fprintln(out, "violation:", v)
	}
}
