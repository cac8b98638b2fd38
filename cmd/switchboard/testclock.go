//go:build switchboard_testtools

package main

import (
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/sessions/schedules"
)

// scheduleClock is the schedules' clock of a test build: with
// SWITCHBOARD_TEST_CLOCK_FILE set, the time is the RFC 3339 instant the
// file holds, and a test moves it by writing the file and sending the
// process SIGUSR1, which fires the timers that are due by then. Without
// it, nil: the wall clock.
func scheduleClock(getenv func(string) string) schedules.Clock {
	path := getenv("SWITCHBOARD_TEST_CLOCK_FILE")
	if path == "" {
		return nil
	}
	c := &fileClock{path: path}
	moved := make(chan os.Signal, 16)
	signal.Notify(moved, syscall.SIGUSR1)
	go func() {
		for range moved {
			c.fire()
		}
	}()
	return c
}

type fileClock struct {
	path   string
	mu     sync.Mutex
	timers []fileTimer
}

type fileTimer struct {
	at time.Time
	c  chan time.Time
}

func (c *fileClock) Now() time.Time {
	raw, err := os.ReadFile(c.path)
	if err != nil {
		panic("test clock: " + err.Error())
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(raw)))
	if err != nil {
		panic("test clock: " + err.Error())
	}
	return t
}

// Timer fires once the file's time reaches now+d, at a SIGUSR1.
func (c *fileClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	return c.TimerAt(c.Now().Add(d))
}

// TimerAt fires once the file's time reaches at: at once when it has,
// else at the SIGUSR1 that moves it there. Looking at registration too
// means a move signalled while no timer waited is not missed.
func (c *fileClock) TimerAt(at time.Time) (<-chan time.Time, func()) {
	ft := fileTimer{at: at, c: make(chan time.Time, 1)}
	c.mu.Lock()
	if now := c.Now(); !now.Before(at) {
		ft.c <- now
	} else {
		c.timers = append(c.timers, ft)
	}
	c.mu.Unlock()
	return ft.c, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, t := range c.timers {
			if t.c == ft.c {
				c.timers = append(c.timers[:i], c.timers[i+1:]...)
				return
			}
		}
	}
}

func (c *fileClock) fire() {
	now := c.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.timers[:0]
	for _, t := range c.timers {
		if now.Before(t.at) {
			kept = append(kept, t)
			continue
		}
		t.c <- now
	}
	c.timers = kept
}
