package sandbox

import "fmt"

// capture keeps the first and last halves of up to max bytes of a stream
// and counts what it drops between them, so that a command printing
// gigabytes costs the gateway max bytes.
type capture struct {
	max   int
	head  []byte
	tail  []byte // the latest bytes past head, at most 2× the tail budget
	total int64
}

func newCapture(max int) *capture { return &capture{max: max} }

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	c.total += int64(n)
	headMax := c.max / 2
	if room := headMax - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	tailMax := c.max - headMax
	if len(p) >= tailMax {
		c.tail = append(c.tail[:0], p[len(p)-tailMax:]...)
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > 2*tailMax {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-tailMax:]...)
	}
	return n, nil
}

// result returns the kept bytes, head then tail with a note between them
// when some were dropped, and how many were.
func (c *capture) result() ([]byte, int64) {
	tailMax := c.max - c.max/2
	tail := c.tail
	if len(tail) > tailMax {
		tail = tail[len(tail)-tailMax:]
	}
	omitted := c.total - int64(len(c.head)+len(tail))
	out := make([]byte, 0, len(c.head)+len(tail)+64)
	out = append(out, c.head...)
	if omitted > 0 {
		out = fmt.Appendf(out, "\n[… %d bytes omitted …]\n", omitted)
	}
	return append(out, tail...), omitted
}
