package main_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/ackload"
	"github.com/switchboardhq/switchboard/fixtures/diskfloor"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/fixtures/latency"
	"github.com/switchboardhq/switchboard/fixtures/modelserver"
)

// BenchmarkSlackAck posts signed Slack app_mention events, each a new
// thread so each starts a turn, to a gateway's binary (serve on bbolt,
// answered by a scripted model, its replies going to a fake Slack, both
// served by this process), at
// SWITCHBOARD_BENCH_ACK_RATE a second (default 500) for
// SWITCHBOARD_BENCH_ACK_SECONDS (default 5) after a second of warm-up,
// and reports the acks' p50 and p99, measured from each request's due
// time, and the rate achieved. In the same run, the same load goes to
// the fair baseline: a bare handler that answers once a 4 KiB record is
// group-committed on the same disk (ackload.Floor). It does its whole
// measurement once, whatever b.N.
func BenchmarkSlackAck(b *testing.B) {
	rate := ackSetting(b, "SWITCHBOARD_BENCH_ACK_RATE", 500)
	seconds := ackSetting(b, "SWITCHBOARD_BENCH_ACK_SECONDS", 5)
	warm, n := rate, rate*(1+seconds)
	dir := b.TempDir()

	g, err := diskfloor.NewGroup(filepath.Join(dir, "floor"))
	if err != nil {
		b.Fatal(err)
	}
	floor := httptest.NewServer(ackload.Floor{Group: g})
	defer floor.Close()
	defer g.Close()

	ms, hs := modelserver.Start(b, func(s *modelserver.Server) { s.Forget = true })
	ms.Default = func(modelserver.Request) modelserver.Step { return modelserver.Step{Text: "acked and answered"} }
	slack := fakeslack.Start(b)
	bot := slack.AddTeam(fakeslack.Team{ID: "T0ACK", Name: "Ack"})
	team, _ := slack.Team("T0ACK")
	const secret = "ack-bench-signing-secret"
	gateway := startServer(b, filepath.Join(dir, "data"), map[string]string{
		"SWITCHBOARD_MODEL":     "anthropic/claude-test",
		"ANTHROPIC_API_KEY":     "test-key",
		"ANTHROPIC_BASE_URL":    modelserver.AnthropicBaseURL(hs.URL),
		"SWITCHBOARD_SANDBOX":   "none",
		"SLACK_SIGNING_SECRET":  secret,
		"SLACK_BOT_TOKEN":       bot,
		"SLACK_API_URL":         slack.APIURL(),
		"SWITCHBOARD_LOG_LEVEL": "warn",
	})
	url := gateway.url

	mentions := make([]*http.Request, n)
	floorReqs := make([]*http.Request, n)
	for i := range mentions {
		m := slack.Human(team.ID, "C0LOAD", "U0ALICE", "<@"+team.BotUserID+"> load "+strconv.Itoa(i), "")
		body := fakeslack.Event{Team: team, Inner: fakeslack.Mention(m)}.JSON()
		mentions[i] = fakeslack.SignedRequest(url+"/webhooks/slack", secret, time.Now(), "application/json", body)
		floorReqs[i] = fakeslack.SignedRequest(floor.URL, secret, time.Now(), "application/json", body)
	}
	b.ResetTimer()
	base, err := ackload.Run(ackload.Load{Requests: floorReqs, Rate: rate, Warm: warm})
	if err != nil {
		b.Fatal(err)
	}
	turnsBefore := turnsDone(b, url)
	began := time.Now()
	got, err := ackload.Run(ackload.Load{Requests: mentions, Rate: rate, Warm: warm})
	if err != nil {
		b.Fatal(err)
	}
	took := time.Since(began)
	turns := turnsDone(b, url) - turnsBefore
	b.StopTimer()
	if got.Failed > 0 || base.Failed > 0 {
		b.Errorf("not acked with 200: %d of %d mentions, %d of %d baseline requests", got.Failed, n-warm, base.Failed, n-warm)
	}
	b.ReportMetric(latency.Millis(got.P50), "ack-p50-ms")
	b.ReportMetric(latency.Millis(got.P99), "ack-p99-ms")
	b.ReportMetric(got.Rate, "rate")
	b.ReportMetric(latency.Millis(base.P50), "baseline-ack-p50-ms")
	b.ReportMetric(latency.Millis(base.P99), "baseline-ack-p99-ms")
	b.ReportMetric(base.Rate, "baseline-rate")
	// Whether the turns kept up: below the mentions' rate, the sessions
	// waiting for a turn pile up for the whole run, and the acks are
	// measured beside a backlog that grows.
	b.ReportMetric(float64(turns)/took.Seconds(), "turns/s")
	b.ReportMetric(float64(rate), "baseline-turns/s")
	b.Logf("%d mentions at %d/s: ack p50 %v p99 %v (warm-up p99 %v), %.0f/s; baseline p50 %v p99 %v, %.0f/s; %d turns in %v",
		n-warm, rate, got.P50, got.P99, got.WarmP99, got.Rate, base.P50, base.P99, base.Rate, turns, took.Round(time.Millisecond))
}

// turnsDone is how many turns the gateway at url has ended, by its
// metrics.
func turnsDone(b *testing.B, url string) int {
	b.Helper()
	code, raw := doReq(b, "GET", url+"/metrics", "", nil)
	if code != http.StatusOK {
		b.Fatalf("metrics: %d %s", code, raw)
	}
	total := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "switchboard_turns_total{") {
			continue
		}
		n, err := strconv.Atoi(line[strings.LastIndexByte(line, ' ')+1:])
		if err != nil {
			b.Fatalf("metrics line %q: %v", line, err)
		}
		total += n
	}
	return total
}

// ackSetting reads a positive integer from the environment, or def.
func ackSetting(b *testing.B, name string, def int) int {
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
