package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// bodyPage reads one page of a list: query selects the bodies in id
// order after $1, at most $2 of them (the store asks for one more than
// the page, to tell whether more follow), with args from $3 on.
func bodyPage[T any](ctx context.Context, s *Store, what, query, after string, limit int, args ...any) ([]*T, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	limit = record.ClampLimit(limit)
	rows, err := s.poolFor(ctx).Query(ctx, query, append([]any{after, limit + 1}, args...)...)
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", what, err)
	}
	raws, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", what, err)
	}
	more := len(raws) > limit
	if more {
		raws = raws[:limit]
	}
	out := make([]*T, 0, len(raws))
	for _, raw := range raws {
		v, err := record.Decode[T](what, raw)
		if err != nil {
			return nil, false, fmt.Errorf("list %s: %w", what, err)
		}
		out = append(out, v)
	}
	return out, more, nil
}

// getBody reads one record's body with query (which takes args); a
// missing row is core.ErrNotFound, named by what and key.
func getBody[T any](ctx context.Context, q querier, what, key, query string, args ...any) (*T, error) {
	var raw []byte
	err := q.QueryRow(ctx, query, args...).Scan(&raw)
	if noRow(err) {
		return nil, fmt.Errorf("%s %q: %w", what, key, core.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %q: %w", what, key, err)
	}
	return record.Decode[T](what, raw)
}

// readOne reads one record from the pool; op names the call in errors.
func readOne[T any](ctx context.Context, s *Store, op, what, key, query string, args ...any) (*T, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	v, err := getBody[T](ctx, s.poolFor(ctx), what, key, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return v, nil
}

// deleteOne runs a delete of one record in its own transaction; a delete
// that found no row is notFound. op names the call in errors.
func (s *Store) deleteOne(ctx context.Context, op string, notFound error, query string, args ...any) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.do(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, query, args...)
		if err == nil && tag.RowsAffected() == 0 {
			err = notFound
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// lockOrInsert locks the row lock selects by key (and returns its body)
// or, when there is none, inserts the one insert makes (with the args row
// gives) and returns nil. A concurrent transaction may insert the same
// key between the two: insert then does nothing and the row it made is
// locked instead, so two writers of one key take turns rather than fail.
func lockOrInsert(ctx context.Context, tx pgx.Tx, what string, key []any, lock, insert string, row func() ([]any, error)) ([]byte, error) {
	for range 3 {
		var body []byte
		err := tx.QueryRow(ctx, lock, key...).Scan(&body)
		if err == nil {
			return body, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return nil, err
		}
		args, err := row()
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", what, err)
		}
		tag, err := tx.Exec(ctx, insert, args...)
		if err != nil {
			return nil, err
		}
		if tag.RowsAffected() == 1 {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%s is being created and deleted concurrently: %w", what, core.ErrConflict)
}
