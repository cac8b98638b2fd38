package sandbox

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/moby/moby/client"
)

// addrBookTTL bounds how long a looked-up address is trusted when no
// container start of this gateway says otherwise.
const addrBookTTL = 2 * time.Second

// addrBook maps the sandbox network's addresses to the names of the
// containers holding them, for the egress proxy's per-connection lookup.
// One network inspection serves every connection until a container of
// this gateway starts: only a start gives an address a new holder, so
// while one is under way a cached holder is not trusted, and once it is
// done the book is read again. An address not in the book is always read
// again (a sandbox's first connection can beat its start's answer), but
// readers waiting together share one inspection.
//
// The zero value is ready; inspect is set when the proxy starts.
type addrBook struct {
	inspect func(ctx context.Context) (map[netip.Addr]string, error)
	now     func() time.Time // default time.Now

	mu       sync.Mutex
	starting int    // container starts under way
	gen      uint64 // bumped when a start ends
	names    map[netip.Addr]string
	readAt   time.Time // when the inspection that filled names began
	readGen  uint64
	readMu   sync.Mutex // one inspection at a time
}

func (b *addrBook) clock() time.Time {
	if b.now != nil {
		return b.now()
	}
	return time.Now()
}

// starts brackets a container start: the returned func ends it.
func (b *addrBook) starts() (done func()) {
	b.mu.Lock()
	b.starting++
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		b.starting--
		b.gen++
		b.mu.Unlock()
	}
}

// name returns the container holding addr, "" when none does.
func (b *addrBook) name(ctx context.Context, addr netip.Addr) (string, error) {
	asked := b.clock()
	if n, ok := b.cached(addr, time.Time{}); ok {
		return n, nil
	}
	b.readMu.Lock()
	defer b.readMu.Unlock()
	// An inspection that began after this lookup was asked, while no
	// start was under way, answers it, a miss included.
	if n, ok := b.cached(addr, asked); ok {
		return n, nil
	}
	b.mu.Lock()
	gen, trusted := b.gen, b.starting == 0
	b.mu.Unlock()
	began := b.clock()
	names, err := b.inspect(ctx)
	if err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if trusted {
		b.names, b.readAt, b.readGen = names, began, gen
	}
	return names[addr], nil
}

// cached answers from the book when it holds addr and is fresh, or, with
// since set, when it was read after since (then a miss answers too).
func (b *addrBook) cached(addr netip.Addr, since time.Time) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.names == nil || b.starting > 0 || b.readGen != b.gen {
		return "", false
	}
	n, ok := b.names[addr]
	if ok && b.clock().Sub(b.readAt) < addrBookTTL {
		return n, true
	}
	if !since.IsZero() && !b.readAt.Before(since) {
		return n, true
	}
	return "", false
}

// inspectNetwork reads who holds each address on the sandbox network.
func (d *Docker) inspectNetwork(ctx context.Context) (map[netip.Addr]string, error) {
	res, err := d.cli.NetworkInspect(ctx, d.net.name, client.NetworkInspectOptions{})
	if err != nil {
		return nil, err
	}
	names := make(map[netip.Addr]string, len(res.Network.Containers))
	for _, ep := range res.Network.Containers {
		names[ep.IPv4Address.Addr()] = ep.Name
	}
	return names, nil
}

// startContainer starts a container of this gateway, telling the address
// book.
func (d *Docker) startContainer(ctx context.Context, id string) error {
	done := d.addrs.starts()
	defer done()
	_, err := d.cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
	return err
}
