package runtime

import "time"

// Clock is the runtime's time: the scheduler's sleeps and the retry
// back-off read it, so tests can drive them without waiting.
type Clock interface {
	Now() time.Time
	// Timer fires once after d; stop releases it early.
	Timer(d time.Duration) (c <-chan time.Time, stop func())
}

// retry is the back-off of a session whose cycles keep failing.
type retry struct {
	failures int
	at       time.Time // not run again before
}

// backoff is the wait after the n-th consecutive failure: base doubling
// per failure, at most max.
func backoff(base, max time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}
