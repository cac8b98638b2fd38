package httpserver

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// limitListener accepts at most max connections open at once. Past that,
// a connection that is not in a handler gives up its place to the new
// one: first the oldest that never sent a whole request header (a silent
// or trickling socket, which anyone can open without credentials), then
// the one waiting the longest between keep-alive requests. Only when
// every open connection is in a handler does Accept wait: the next
// connections then wait in the kernel's backlog and hold no file
// descriptor of the process (but one, accepted to find it a place), and a
// connection freed lets the next one in. A connection gets a second to send
// its first request before it can be made to go.
//
// So sockets that never finish a request cannot keep a complete request
// from anyone else out; they are also closed after the header timeout.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
	now   func() time.Time
	// grace is how long a new connection has to send its first request
	// before it may be made to give its place up.
	grace time.Duration

	mu    sync.Mutex
	conns map[*slotConn]struct{}
	// evictable is poked when a connection may have become evictable (it
	// went idle), so an Accept waiting at the cap looks again.
	evictable chan struct{}
}

// newConnGrace is the time a new connection has to send its first
// request before it may be closed for another: far more than a client
// that means it needs, far less than a header timeout.
const newConnGrace = time.Second

func newLimitListener(ln net.Listener, max int, grace time.Duration) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{}), now: time.Now, grace: grace,
		conns: map[*slotConn]struct{}{}, evictable: make(chan struct{}, 1)}
}

func (l *limitListener) Accept() (net.Conn, error) {
	if l.take() {
		c, err := l.Listener.Accept()
		if err != nil {
			<-l.slots
			return nil, err
		}
		return l.track(c), nil
	}
	// Full: the next connection is accepted first (one past the cap, so
	// that only a connection that arrived makes another go), then takes
	// the place of one that gives it up, or waits for a free slot.
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	for !l.take() {
		if l.evict() {
			continue // its slot is free now
		}
		var recheck <-chan time.Time
		if l.grace > 0 {
			recheck = time.After(l.grace) // a young one may be old enough then
		}
		select {
		case l.slots <- struct{}{}:
			return l.track(c), nil
		case <-l.evictable:
		case <-recheck:
		case <-l.done:
			c.Close()
			return nil, net.ErrClosed
		}
	}
	return l.track(c), nil
}

// track follows an accepted connection, which holds a slot.
func (l *limitListener) track(c net.Conn) *slotConn {
	sc := &slotConn{Conn: c, l: l, since: l.now()}
	l.mu.Lock()
	l.conns[sc] = struct{}{}
	l.mu.Unlock()
	return sc
}

// take takes a free slot, if there is one.
func (l *limitListener) take() bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

// evict closes the connection that gives its place up first (see
// limitListener), and reports whether there was one.
func (l *limitListener) evict() bool {
	l.mu.Lock()
	var victim *slotConn
	now := l.now()
	for c := range l.conns {
		// A connection at work stays, and so does one accepted a moment
		// ago that is still sending its first request.
		if c.inHandler > 0 || (!c.served && now.Sub(c.since) < l.grace) {
			continue
		}
		if victim == nil || c.before(victim) {
			victim = c
		}
	}
	l.mu.Unlock()
	if victim == nil {
		return false
	}
	victim.Close()
	return true
}

func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// connState follows what net/http does with each connection (the
// server's ConnState hook).
func (l *limitListener) connState(c net.Conn, st http.ConnState) {
	sc, ok := c.(*slotConn)
	if !ok {
		return
	}
	l.mu.Lock()
	switch st {
	case http.StateIdle:
		sc.idle, sc.since = true, l.now()
	case http.StateActive:
		sc.idle = false
	}
	l.mu.Unlock()
	if st == http.StateIdle {
		select {
		case l.evictable <- struct{}{}:
		default:
		}
	}
}

// serving marks the request's connection in a handler until done is
// called: a connection at work is never evicted.
func (l *limitListener) serving(ctx context.Context) (done func()) {
	sc, _ := ctx.Value(connKey{}).(*slotConn)
	if sc == nil {
		return func() {}
	}
	l.mu.Lock()
	sc.inHandler++
	sc.served, sc.idle = true, false
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		sc.inHandler--
		l.mu.Unlock()
	}
}

type connKey struct{}

// slotConn frees its slot at its first Close.
type slotConn struct {
	net.Conn
	l    *limitListener
	once sync.Once

	// Guarded by l.mu.
	inHandler int       // requests of it in a handler now
	served    bool      // a request of it reached a handler
	idle      bool      // between keep-alive requests
	since     time.Time // accepted, or idle since
}

// before reports whether c gives its place up before o: a connection that
// never sent a whole request before an idle one, then the oldest.
func (c *slotConn) before(o *slotConn) bool {
	if c.served != o.served {
		return !c.served
	}
	return c.since.Before(o.since)
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
		<-c.l.slots
	})
	return err
}
