package client

import "time"

// SetBackoffTimer makes c wait out Follow's reconnect backoff on what
// after returns instead of on a timer.
func SetBackoffTimer(c *Client, after func(time.Duration) <-chan time.Time) { c.after = after }
