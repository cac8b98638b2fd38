package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// ListSessions pages through sessions in id order. The query names only
// the filters given, so each is answered from its index (external key,
// status, agent, provider or tenant, then id) rather than by a plan that
// must allow any. A text filter reads first_text of at most MaxExamined
// of the sessions the others select.
func (s *Store) ListSessions(ctx context.Context, f core.SessionFilter) (core.SessionList, error) {
	if err := record.CheckFilter(f); err != nil {
		return core.SessionList{}, err
	}
	where := []string{"id > $1"}
	args := []any{f.After}
	add := func(column, value string) {
		if value != "" {
			args = append(args, value)
			where = append(where, column+" = $"+strconv.Itoa(len(args)))
		}
	}
	if f.OriginKey != "" {
		// An origin's key, or a link's.
		args = append(args, f.OriginKey)
		n := strconv.Itoa(len(args))
		where = append(where, "(external_key = $"+n+" OR id = (SELECT session_id FROM session_links WHERE key = $"+n+"))")
	}
	add("status", string(f.Status))
	add("agent_id", f.AgentID)
	add("provider", f.Provider)
	add("tenant", f.Tenant)
	var list core.SessionList
	var err error
	if f.Text != "" {
		list, err = s.listText(ctx, f, where, args)
	} else {
		sql := `SELECT body, first_text FROM sessions WHERE ` + strings.Join(where, " AND ") + ` ORDER BY id LIMIT $` + strconv.Itoa(len(args)+1)
		list.Sessions, list.HasMore, err = listRows(ctx, s, sql, args, f.Limit, collectListed)
		if list.HasMore {
			list.Next = list.Sessions[len(list.Sessions)-1].ID
		}
	}
	if err != nil {
		return core.SessionList{}, fmt.Errorf("list sessions: %w", err)
	}
	return list, nil
}

// listText answers a text filter. It reads the sessions where selects
// past the cursor in id order, numbered, and stops at the page's hits
// and one more (to tell there are more) or at MaxExamined; only when the
// hits fall short does a second query find the last session examined and
// whether one would have come next.
func (s *Store) listText(ctx context.Context, f core.SessionFilter, where []string, args []any) (core.SessionList, error) {
	if err := ctxErr(ctx); err != nil {
		return core.SessionList{}, err
	}
	limit, max := record.ClampLimit(f.Limit), record.MaxExamined(f)
	cond := strings.Join(where, " AND ")
	param := func(i int) string { return "$" + strconv.Itoa(len(args)+i) }
	selected := `SELECT id, first_text FROM sessions WHERE ` + cond + ` ORDER BY id LIMIT ` + param(1)
	sql := `SELECT s.body, s.first_text FROM (
			SELECT id, first_text FROM (` + selected + `) x
			WHERE strpos(lower(first_text), lower(` + param(2) + `)) > 0 ORDER BY id LIMIT ` + param(3) + `
		) e JOIN sessions s USING (id) ORDER BY e.id`
	rows, err := s.poolFor(ctx).Query(ctx, sql, append(args, max, f.Text, limit+1)...)
	if err != nil {
		return core.SessionList{}, err
	}
	var list core.SessionList
	if list.Sessions, err = collectListed(rows); err != nil {
		return core.SessionList{}, err
	}
	if len(list.Sessions) > limit {
		list.Sessions = list.Sessions[:limit]
		list.HasMore, list.Next = true, list.Sessions[limit-1].ID
		return list, nil
	}
	// The max-th session selected, and the one after it if any.
	edge, err := s.ids(ctx, `SELECT id FROM sessions WHERE `+cond+` ORDER BY id OFFSET `+param(1)+` LIMIT 2`, append(args, max-1)...)
	if err != nil {
		return core.SessionList{}, err
	}
	switch {
	case len(edge) < 2:
	case len(list.Sessions) == limit:
		list.HasMore, list.Next = true, list.Sessions[limit-1].ID
	default:
		list.HasMore, list.Capped, list.Next = true, true, edge[0]
	}
	return list, nil
}

// collectListed reads listed sessions, each row its body and first text.
func collectListed(rows pgx.Rows) ([]*core.Session, error) {
	defer rows.Close()
	out := []*core.Session{}
	for rows.Next() {
		var v []byte
		var text *string
		if err := rows.Scan(&v, &text); err != nil {
			return nil, err
		}
		sess, err := decodeSession(v)
		if err != nil {
			return nil, err
		}
		if text != nil {
			sess.FirstText = *text
		}
		out = append(out, sess)
	}
	return out, rows.Err()
}

// Archive makes the session read-only: it drops the queued inputs, the wake
// and any lease, since an archived session is never visited again.
func (s *Store) Archive(ctx context.Context, id string) (*core.Session, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	// Archiving twice must not cost a write.
	cur, err := s.GetSession(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	if cur.Status == core.StatusArchived {
		return cur, nil
	}
	var out *core.Session
	err = s.write(ctx, id, func(tx pgx.Tx) ([]core.Change, error) {
		r, err := lockRow(ctx, tx, id)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, fmt.Errorf("session %s: %w", id, core.ErrNotFound)
		}
		out = r.sess
		if r.sess.Status == core.StatusArchived {
			return nil, nil
		}
		r.setStatus(core.StatusArchived)
		r.sess.UpdatedAt = s.clock()
		r.lease = nil
		b := &pgx.Batch{}
		b.Queue(`DELETE FROM pending_inputs WHERE session_id = $1`, id)
		b.Queue(`DELETE FROM wakes WHERE session_id = $1`, id)
		if err := r.save(b); err != nil {
			return nil, err
		}
		r.queueCounts(b)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return nil, err
		}
		return []core.Change{r.change(core.Change{})}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	return out, nil
}

// CountByStatus sums the counters every status change moves; it reads a
// few rows per status, never the sessions.
func (s *Store) CountByStatus(ctx context.Context) (map[core.Status]int, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	rows, err := s.poolFor(ctx).Query(ctx, `SELECT status, sum(n)::bigint FROM session_counts GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count sessions: %w", err)
	}
	defer rows.Close()
	out := map[core.Status]int{}
	for rows.Next() {
		var st string
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("count sessions: %w", err)
		}
		if n < 0 {
			s.log.Warn("status count went negative; clamped", "status", st, "count", n)
			n = 0
		}
		// Only the statuses in use, as the bbolt store answers.
		if n > 0 {
			out[core.Status(st)] = int(n)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count sessions: %w", err)
	}
	return out, nil
}
