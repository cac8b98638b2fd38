package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

const optInhibitIPv4 = "com.docker.network.bridge.inhibit_ipv4"

// netInfo is the network sandboxes join.
type netInfo struct {
	name, bridge string
	// gateway is the host's address on the network: where the egress
	// proxy listens. Invalid when the host has none (egress off).
	gateway netip.Addr
}

// setupNetwork makes sure the deployment's network exists and is of the
// kind the configuration needs: with the egress proxy, the host has the
// gateway address on it (and the firewall confines sandboxes to the proxy
// there); without, it has no address at all and sandboxes reach nothing.
// A network of the other kind (the proxy was turned on or off) is made
// again; its containers go with it and are created again at their next
// command, their workspaces kept.
func (d *Docker) setupNetwork(ctx context.Context) (netInfo, error) {
	if d.cfg.Network != "" {
		return netInfo{name: d.cfg.Network}, nil
	}
	name := d.cfg.networkName()
	withHost := d.cfg.Egress != nil
	res, err := d.cli.NetworkInspect(ctx, name, client.NetworkInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		if err := d.createNetwork(ctx, withHost); err != nil {
			return netInfo{}, err
		}
	case err != nil:
		return netInfo{}, fmt.Errorf("sandbox network %s: %w", name, err)
	case (res.Network.Options[optInhibitIPv4] != "true") != withHost:
		d.log.Warn("sandbox network changes kind (egress proxy turned on or off): its sandboxes are created again at their next command, workspaces kept", "network", name, "egress", withHost)
		if err := d.replaceNetwork(ctx, res.Network); err != nil {
			return netInfo{}, err
		}
		if err := d.createNetwork(ctx, withHost); err != nil {
			return netInfo{}, err
		}
	}
	if res, err = d.cli.NetworkInspect(ctx, name, client.NetworkInspectOptions{}); err != nil {
		return netInfo{}, fmt.Errorf("sandbox network %s: %w", name, err)
	}
	info := netInfo{name: name, bridge: bridgeName(res.Network)}
	if withHost {
		for _, c := range res.Network.IPAM.Config {
			if c.Gateway.Is4() {
				info.gateway = c.Gateway
				break
			}
		}
		if !info.gateway.IsValid() {
			return netInfo{}, fmt.Errorf("sandbox network %s has no IPv4 gateway address for the egress proxy", name)
		}
	}
	return info, nil
}

func (d *Docker) createNetwork(ctx context.Context, withHost bool) error {
	name := d.cfg.networkName()
	opts := map[string]string{
		// No traffic between sandboxes of the network.
		"com.docker.network.bridge.enable_icc": "false",
	}
	if !withHost {
		// No IPv4 address on the host's end of the bridge, so the host's
		// own listeners are not reachable through it either.
		opts[optInhibitIPv4] = "true"
	}
	_, err := d.cli.NetworkCreate(ctx, name, client.NetworkCreateOptions{
		Driver: "bridge",
		// Internal: no route out of the network.
		Internal: true,
		Options:  opts,
		Labels:   d.cfg.labels("", "network"),
	})
	if cerrdefs.IsConflict(err) {
		err = nil // another process of the deployment made it first
	}
	if err != nil {
		return fmt.Errorf("create sandbox network %s: %w", name, err)
	}
	return nil
}

// replaceNetwork removes the network after the deployment's containers on
// it (volumes stay), and its firewall chain.
func (d *Docker) replaceNetwork(ctx context.Context, n network.Inspect) error {
	f := client.Filters{}.Add("label", LabelDeployment+"="+d.cfg.Deployment)
	cs, err := d.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("list sandboxes: %w", err)
	}
	var errs []error
	for _, c := range cs.Items {
		_, err := d.cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true})
		errs = append(errs, ignoreNotFound(err))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove the sandboxes of network %s: %w", n.Name, err)
	}
	if _, err := d.cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); ignoreNotFound(err) != nil {
		return fmt.Errorf("remove sandbox network %s: %w", n.Name, err)
	}
	if err := removeFirewall(ctx, firewallChain(d.cfg.Deployment)); err != nil {
		d.log.Warn("remove the old network's firewall chain", "err", err)
	}
	return nil
}

// bridgeName is the host interface of a bridge network.
func bridgeName(n network.Inspect) string {
	if name := n.Options["com.docker.network.bridge.name"]; name != "" {
		return name
	}
	if len(n.ID) >= 12 {
		return "br-" + n.ID[:12]
	}
	return ""
}
