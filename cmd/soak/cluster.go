package main

import (
	"math/rand/v2"
	"sync"
)

// cluster is the gateway under test: one serve, or several replicas on
// one PostgreSQL store. Traffic goes to a live replica chosen at random,
// so steering, interrupts and answers cross replicas; a kill takes one
// replica at a time.
type cluster struct {
	gws []*gateway

	mu  sync.Mutex
	rnd *rand.Rand
}

func newCluster(gws []*gateway, seed uint64) *cluster {
	return &cluster{gws: gws, rnd: rand.New(rand.NewPCG(seed, 2000))}
}

// URL is a live replica's base URL, "" while every replica is down.
func (c *cluster) URL() string {
	c.mu.Lock()
	first := c.rnd.IntN(len(c.gws))
	c.mu.Unlock()
	for i := range c.gws {
		if u := c.gws[(first+i)%len(c.gws)].URL(); u != "" {
			return u
		}
	}
	return ""
}

// URLs are the live replicas' base URLs.
func (c *cluster) URLs() []string {
	var out []string
	for _, g := range c.gws {
		if u := g.URL(); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// killOne SIGKILLs a replica chosen at random and starts it again.
func (c *cluster) killOne() (replica int, err error) {
	c.mu.Lock()
	replica = c.rnd.IntN(len(c.gws))
	c.mu.Unlock()
	g := c.gws[replica]
	g.kill()
	return replica, g.start()
}

func (c *cluster) starts() int {
	n := 0
	for _, g := range c.gws {
		n += g.starts
	}
	return n
}

func (c *cluster) killAll() {
	for _, g := range c.gws {
		g.kill()
	}
}

func (c *cluster) quitAll() {
	for _, g := range c.gws {
		g.quit()
	}
}
