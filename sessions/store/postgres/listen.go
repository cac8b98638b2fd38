package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// listener feeds the store's commit stream with the changes the other
// replicas commit. Their notifications are only a hint (none is sent to a
// connection that is not listening), so when its connection breaks every
// subscriber is told it lagged, once listening again, and recovers from
// the store.
type listener struct {
	s       *Store
	cfg     *pgx.ConnConfig
	channel string
	// pid is the listening connection's backend (tests end it).
	pid atomic.Uint32

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

const msgRetrying = "cannot listen for other replicas' commits; retrying"

// Back-off between attempts to listen again.
const (
	relistenFirst = 100 * time.Millisecond
	relistenMax   = 10 * time.Second
)

// startListener listens on the store's channel, then follows it in the
// background until stop. The first connection is made before Open
// returns, so a subscriber never misses a change committed after it.
func (s *Store) startListener(ctx context.Context, cfg *pgx.ConnConfig) (*listener, error) {
	l := &listener{s: s, cfg: cfg, channel: s.channel, done: make(chan struct{})}
	conn, err := l.connect(ctx)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.run(lctx, conn)
	return l, nil
}

// stop ends the listener and waits for it.
func (l *listener) stop() {
	l.once.Do(l.cancel)
	<-l.done
}

// connect opens a connection of its own (a pool's connection is shared,
// and a listening session must stay open) and listens on the channel.
func (l *listener) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg.Copy())
	if err != nil {
		return nil, fmt.Errorf("connect to listen for other replicas' commits: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
		closeConn(conn)
		return nil, fmt.Errorf("listen for other replicas' commits: %w", err)
	}
	l.pid.Store(conn.PgConn().PID())
	return conn, nil
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

func (l *listener) run(ctx context.Context, conn *pgx.Conn) {
	defer close(l.done)
	for {
		err := l.follow(ctx, conn)
		closeConn(conn)
		if ctx.Err() != nil {
			return
		}
		l.s.log.Warn("lost the notifications of other replicas' commits; listening again", "err", err)
		if conn = l.reconnect(ctx); conn == nil {
			return
		}
		// Listening again: whatever was committed meanwhile is read from
		// the store by the subscribers.
		l.s.commits.LagAll()
	}
}

// follow announces the notices of other replicas until the connection
// fails or ctx ends. The server delivers them in commit order.
func (l *listener) follow(ctx context.Context, conn *pgx.Conn) error {
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		l.announce(ctx, n)
	}
}

// announce publishes the change a notification announces; one that
// cannot be read makes every subscriber recover from the store.
func (l *listener) announce(ctx context.Context, pn *pgconn.Notification) {
	var n notice
	err := json.Unmarshal([]byte(pn.Payload), &n)
	if err == nil && n.Replica == l.s.replica {
		return // published by this store after its commit
	}
	if err == nil && n.Lagged {
		err = errors.New("the change did not fit in a notification")
	}
	if err == nil {
		c, rerr := l.s.noticeChange(ctx, n)
		if rerr == nil {
			l.s.commits.Publish(c)
			return
		}
		err = rerr
	}
	if ctx.Err() != nil {
		return
	}
	l.s.log.Warn("cannot announce another replica's commit; subscribers catch up from the store", "session_id", n.Session, "err", err)
	l.s.commits.LagAll()
}

// reconnect listens again, backing off between failures; nil once ctx
// ends.
func (l *listener) reconnect(ctx context.Context) *pgx.Conn {
	wait := relistenFirst
	for attempt := 1; ; attempt++ {
		conn, err := l.connect(ctx)
		if err == nil {
			if attempt > 1 {
				l.s.log.Info("listening for other replicas' commits again", "attempts", attempt)
			}
			return conn
		}
		if ctx.Err() != nil {
			return nil
		}
		l.s.log.Warn(msgRetrying, "err", err, "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		wait = min(wait*2, relistenMax)
	}
}
