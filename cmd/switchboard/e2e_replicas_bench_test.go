package main_test

import (
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/ackload"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/latency"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// The measurements of replicas on one PostgreSQL, run by
// scripts/bench-replicas (never by scripts/test, which runs no
// benchmarks). Each does its whole measurement once, whatever b.N.

// BenchmarkReplicasFailover SIGKILLs the replica running a turn, runs
// times over (SWITCHBOARD_BENCH_FAILOVER_RUNS, default 10), and reports
// how long the other took to resume the turn (its model request) and to
// finish it, beside the lease time that bounds them.
func BenchmarkReplicasFailover(b *testing.B) {
	runs := benchSetting(b, "SWITCHBOARD_BENCH_FAILOVER_RUNS", 10)
	r := startReplicas(b, nil)
	var resumed, finished []time.Duration
	for i := range runs {
		r.ms.Push(modelserver.Step{Hang: true})
		before := len(r.ms.Requests())
		id := r.srv[i%2].createSession("failover " + strconv.Itoa(i))
		runner := r.ranBy(r.waitModelRequest(before + 1))
		r.ms.Push(modelserver.Step{Text: "resumed"})
		res, fin := r.killRunner(id, runner)
		resumed, finished = append(resumed, res), append(finished, fin)
		r.srv[1-runner].waitIdle(id)
		r.srv[runner] = r.srv[runner].restart()
	}
	p50, p99 := latency.Percentiles(resumed)
	f50, f99 := latency.Percentiles(finished)
	b.ReportMetric(replicaLeaseSeconds, "lease-s")
	b.ReportMetric(p50.Seconds(), "resume-p50-s")
	b.ReportMetric(p99.Seconds(), "resume-p99-s")
	b.ReportMetric(f50.Seconds(), "finish-p50-s")
	b.ReportMetric(f99.Seconds(), "finish-p99-s")
	b.Logf("%d failovers, lease %d s: kill → turn resumed p50 %v p99 %v; kill → turn finished p50 %v p99 %v",
		runs, replicaLeaseSeconds, p50.Round(time.Millisecond), p99.Round(time.Millisecond), f50.Round(time.Millisecond), f99.Round(time.Millisecond))
}

// BenchmarkReplicasWebhookAck posts signed Slack mentions, each a new
// thread, at a fixed rate (SWITCHBOARD_BENCH_ACK_RATE per second, default
// 200, for SWITCHBOARD_BENCH_ACK_SECONDS, default 10), alternating between
// two replicas on PostgreSQL, and reports the ack latency, measured from
// when each request was due (a slow ack does not hold back the next
// request). The turns they start run meanwhile. The baseline, in the same
// run, is the same load on one replica on bbolt. Target: p99 < 250 ms on
// two replicas.
func BenchmarkReplicasWebhookAck(b *testing.B) {
	rate := benchSetting(b, "SWITCHBOARD_BENCH_ACK_RATE", 200)
	seconds := benchSetting(b, "SWITCHBOARD_BENCH_ACK_SECONDS", 10)
	b.Run("postgres-two-replicas", func(b *testing.B) {
		// The lease time replicas run with, not the failover tests' short one.
		r := startReplicas(b, map[string]string{"SWITCHBOARD_LEASE_SECONDS": ""})
		ackLoad(b, r, r.srv[:], rate, seconds)
	})
	b.Run("bbolt-one-replica", func(b *testing.B) {
		r := newPlatforms(b)
		r.srv[0] = startServer(b, b.TempDir(), r.env(0))
		ackLoad(b, r, r.srv[:1], rate, seconds)
	})
}

// ackLoad sends rate mentions a second for seconds, round robin over
// targets (ackload.Run), and reports the acks' p50 and p99 and the rate
// acked. The first ackWarmUp seconds
// at the same rate are a warm-up, reported on their own: the replicas'
// connection pools fill and each connection prepares its statements, the
// load generator opens its connections, as they would on a replica that
// has only just started.
func ackLoad(b *testing.B, r *replicas, targets []*server, rate, seconds int) {
	b.Helper()
	r.ms.Default = func(modelserver.Request) modelserver.Step { return modelserver.Step{Text: "acked and answered"} }
	warm := rate * ackWarmUp
	n := warm + rate*seconds
	// Built and signed beforehand, so the load generator only sends.
	reqs := make([]*http.Request, n)
	for i := range reqs {
		m := r.slack.Human(r.team.ID, "C0LOAD", "U0ALICE", "<@"+r.team.BotUserID+"> load "+strconv.Itoa(i), "")
		body := fakeslack.Event{Team: r.team, Inner: fakeslack.Mention(m)}.JSON()
		reqs[i] = fakeslack.SignedRequest(targets[i%len(targets)].url+"/webhooks/slack", slackSecret, time.Now(), "application/json", body)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1024}, Timeout: patience}
	b.ResetTimer()
	res, err := ackload.Run(ackload.Load{Requests: reqs, Rate: rate, Warm: warm, Client: client})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if res.Failed > 0 {
		b.Errorf("%d of %d mentions not acked with 200", res.Failed, n-warm)
	}
	b.Logf("warm-up, %d s: ack p50 %v, p99 %v", ackWarmUp, res.WarmP50.Round(time.Microsecond), res.WarmP99.Round(time.Microsecond))
	b.ReportMetric(res.Rate, "req/s")
	b.ReportMetric(latency.Millis(res.P50), "p50-ms")
	b.ReportMetric(latency.Millis(res.P99), "p99-ms")
	b.Logf("%d mentions at %d/s over %d replica(s): ack p50 %v, p99 %v", n-warm, rate, len(targets), res.P50.Round(time.Microsecond), res.P99.Round(time.Microsecond))
}

// ackWarmUp is how many seconds of load precede the measured ones.
const ackWarmUp = 2

// benchSetting reads a positive integer from the environment, or def.
func benchSetting(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
