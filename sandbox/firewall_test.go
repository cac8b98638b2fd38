package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"
)

// jumpsTo lists the INPUT rules of bin that jump to chain, and whether
// the chain exists.
func jumpsTo(t *testing.T, bin, chain string) (jumps []string, exists bool) {
	t.Helper()
	out, err := iptablesOutput(context.Background(), bin, "-S")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		switch {
		case line == "-N "+chain:
			exists = true
		case strings.HasPrefix(line, "-A INPUT ") && strings.HasSuffix(line, " -j "+chain):
			jumps = append(jumps, line)
		}
	}
	return jumps, exists
}

// TestFirewallRemovedAtCleanStop: the egress firewall is in place while
// the gateway runs a sandbox; a clean stop (Close, which stops the
// sandboxes first) leaves no chain and no INPUT jump, in iptables and
// ip6tables.
func TestFirewallRemovedAtCleanStop(t *testing.T) {
	d, _ := newEgressDocker(t)
	ctx := context.Background()
	chain := d.egress.fw.chain
	if r := sh(t, d, "ses_fwstop", "echo up"); r.ExitCode != 0 {
		t.Fatalf("sandbox: %+v", r)
	}
	if jumps, exists := jumpsTo(t, "iptables", chain); !exists || len(jumps) != 1 {
		t.Fatalf("while running: chain %v, jumps %q; want the chain and one jump", exists, jumps)
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := d.Close(cctx); err != nil {
		t.Fatal(err)
	}
	for _, bin := range []string{"iptables", "ip6tables"} {
		if !ip6Present() && bin == "ip6tables" {
			continue
		}
		if jumps, exists := jumpsTo(t, bin, chain); exists || len(jumps) > 0 {
			t.Errorf("%s after a clean stop: chain %v, jumps %q; want neither", bin, exists, jumps)
		}
	}
}

// TestFirewallReusedAfterUncleanStop: a gateway that died left its chain
// and jump (and, say, a copy of the jump and one for a bridge that is
// gone); the next start of the deployment reuses the chain and leaves
// exactly one jump, for the network's bridge.
func TestFirewallReusedAfterUncleanStop(t *testing.T) {
	first, _ := newEgressDocker(t)
	ctx := context.Background()
	fw := first.egress.fw
	// Dying: the proxy goes with the process, and nothing of its stop
	// runs.
	first.egress.stop.Do(func() { _ = first.egress.proxy.Close() })
	for _, jump := range [][]string{{"-A", "INPUT", "-i", fw.bridge, "-j", fw.chain}, {"-A", "INPUT", "-i", "br-gone0000000", "-j", fw.chain}} {
		if err := iptables(ctx, "iptables", jump...); err != nil {
			t.Fatal(err)
		}
	}
	if jumps, _ := jumpsTo(t, "iptables", fw.chain); len(jumps) != 3 {
		t.Fatalf("left behind: jumps %q, want 3", jumps)
	}

	second, _ := newEgressDocker(t, func(c *Config, _ *egressSetup) { c.Deployment = first.cfg.Deployment })
	if second.egress.fw.chain != fw.chain || second.egress.fw.bridge != fw.bridge {
		t.Fatalf("the second start has chain %s on %s, want %s on %s", second.egress.fw.chain, second.egress.fw.bridge, fw.chain, fw.bridge)
	}
	jumps, exists := jumpsTo(t, "iptables", fw.chain)
	if want := "-A INPUT -i " + fw.bridge + " -j " + fw.chain; !exists || len(jumps) != 1 || jumps[0] != want {
		t.Fatalf("after the second start: chain %v, jumps %q; want exactly %q", exists, jumps, want)
	}
	if r := sh(t, second, "ses_fwagain", "echo up"); r.ExitCode != 0 {
		t.Fatalf("sandbox after the second start: %+v", r)
	}
}
