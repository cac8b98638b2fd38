package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// ErrFirewall: the host firewall rules that confine sandboxes to the
// egress proxy could not be installed (iptables missing, or not root).
var ErrFirewall = errors.New("cannot install the sandbox firewall rules")

// firewallChain names the deployment's iptables chain (at most 28 bytes).
func firewallChain(deployment string) string {
	if len(deployment) > 24 {
		deployment = deployment[:24]
	}
	return "SWB-" + deployment
}

// firewall confines what a sandbox reaches on the host. With the egress
// proxy on, the host has an address on the sandbox bridge (the proxy
// listens there), and a packet from a sandbox to any of the host's
// addresses arrives through that bridge's INPUT path; Docker's own rules
// only filter forwarded traffic. The chain, jumped to from INPUT for the
// bridge alone, accepts TCP to the proxy and drops everything else (IPv6
// included). It is installed before the proxy listens, reusing the chain
// a gateway that died left behind. A clean stop, once no sandbox of the
// deployment runs, removes it and its jump; a stop that leaves sandboxes
// running empties it down to its DROP, and a gateway that dies leaves it
// as it was: sandboxes reach nothing rather than everything.
type firewall struct {
	chain, bridge string
	gateway       netip.Addr
	port          int
}

// iptables runs one iptables (or ip6tables) command.
func iptables(ctx context.Context, bin string, args ...string) error {
	_, err := iptablesOutput(ctx, bin, args...)
	return err
}

func iptablesOutput(ctx context.Context, bin string, args ...string) (string, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		path = "/usr/sbin/" + bin
	}
	var out, errOut bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append([]string{"-w", "5"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// install (re)fills the chains and hooks them into INPUT; it is
// idempotent, so a restart after a crash finds and fixes them.
func (f firewall) install(ctx context.Context) error {
	rules := [][]string{
		{"-p", "tcp", "-d", f.gateway.String(), "--dport", strconv.Itoa(f.port), "-j", "ACCEPT"},
		{"-j", "DROP"},
	}
	if err := f.fill(ctx, "iptables", rules); err != nil {
		return fmt.Errorf("%w: %w", ErrFirewall, err)
	}
	// Docker leaves IPv6 off on this network, but the host may still have
	// a link-local address on the bridge.
	if err := f.fill(ctx, "ip6tables", [][]string{{"-j", "DROP"}}); err != nil && ip6Present() {
		return fmt.Errorf("%w: %w", ErrFirewall, err)
	}
	return nil
}

// seal empties the chain down to its DROP: the gateway stops, the
// sandboxes still running keep reaching nothing.
func (f firewall) seal(ctx context.Context) error {
	return f.fill(ctx, "iptables", [][]string{{"-j", "DROP"}})
}

func (f firewall) fill(ctx context.Context, bin string, rules [][]string) error {
	if err := iptables(ctx, bin, "-N", f.chain); err != nil && !strings.Contains(err.Error(), "exists") {
		return err
	}
	if err := iptables(ctx, bin, "-F", f.chain); err != nil {
		return err
	}
	for _, r := range rules {
		if err := iptables(ctx, bin, append([]string{"-A", f.chain}, r...)...); err != nil {
			return err
		}
	}
	// A chain left by a gateway that did not stop cleanly is reused:
	// its jumps for another bridge (the network was made again) go, and
	// so do copies of the bridge's, so exactly one jump stays.
	if deleteJumps(ctx, bin, f.chain, f.bridge) {
		return nil
	}
	return iptables(ctx, bin, "-I", "INPUT", "1", "-i", f.bridge, "-j", f.chain)
}

// removeFirewall deletes a deployment's chains and every jump to them;
// missing ones (or a missing iptables) are not errors.
func removeFirewall(ctx context.Context, chain string) error {
	var errs []error
	for _, bin := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(bin); err != nil {
			continue
		}
		deleteJumps(ctx, bin, chain, "")
		if err := iptables(ctx, bin, "-F", chain); err != nil {
			if !noChain(err) {
				errs = append(errs, err)
			}
			continue
		}
		if err := iptables(ctx, bin, "-X", chain); err != nil && !noChain(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// deleteJumps deletes the INPUT rules that jump to chain but one for the
// bridge keep (when given), and reports whether it kept one.
func deleteJumps(ctx context.Context, bin, chain, keep string) (kept bool) {
	rules, err := iptablesOutput(ctx, bin, "-S", "INPUT")
	if err != nil {
		return false
	}
	for line := range strings.Lines(rules) {
		fields := strings.Fields(line)
		if len(fields) < 3 || fields[0] != "-A" || fields[len(fields)-1] != chain || fields[len(fields)-2] != "-j" {
			continue
		}
		if keep != "" && !kept && strings.Join(fields[1:], " ") == "INPUT -i "+keep+" -j "+chain {
			kept = true
			continue
		}
		_ = iptables(ctx, bin, append([]string{"-D"}, fields[1:]...)...)
	}
	return kept
}

func noChain(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "No chain") || strings.Contains(msg, "does not exist") || strings.Contains(msg, "not found")
}

// ip6Present tells whether the kernel does IPv6 at all (ip6tables fails
// on kernels without it, where there is nothing to filter).
func ip6Present() bool {
	_, err := exec.LookPath("ip6tables")
	if err != nil {
		return false
	}
	_, err = os.Stat("/proc/net/if_inet6")
	return err == nil
}
