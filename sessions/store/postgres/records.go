package postgres

import (
	"context"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
)

// querier reads from a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// collect reads one bytea column of rows and decodes each value.
func collect[T any](rows pgx.Rows, decode func([]byte) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v []byte
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		item, err := decode(v)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, rows.Err()
}

// listPage reads one page of records in id order: sql selects their
// bodies after the cursor ($1) with args, ordered by id, and takes the
// limit as its last parameter. It asks for one more row than the page
// holds to tell whether there are more.
func listPage[T any](ctx context.Context, s *Store, sql string, args []any, limit int, decode func([]byte) (T, error)) ([]T, bool, error) {
	return listRows(ctx, s, sql, args, limit, func(rows pgx.Rows) ([]T, error) { return collect(rows, decode) })
}

// listRows is listPage for rows of more than a body, which read collects.
func listRows[T any](ctx context.Context, s *Store, sql string, args []any, limit int, read func(pgx.Rows) ([]T, error)) ([]T, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	limit = record.ClampLimit(limit)
	rows, err := s.poolFor(ctx).Query(ctx, sql, append(args, limit+1)...)
	if err != nil {
		return nil, false, err
	}
	out, err := read(rows)
	if err != nil {
		return nil, false, err
	}
	if len(out) > limit {
		return out[:limit], true, nil
	}
	return out, false, nil
}

func decodeEvent(v []byte) (core.Event, error) {
	e, err := record.DecodeEvent("event", v)
	if err != nil {
		return core.Event{}, err
	}
	return *e, nil
}

// encodeEvents encodes events for an unnest insert.
func encodeEvents(events []core.Event) [][]byte {
	out := make([][]byte, len(events))
	for i := range events {
		out[i] = record.EncodeEvent(&events[i])
	}
	return out
}

// ids reads one text column, in the query's order; none is an empty list.
func (s *Store) ids(ctx context.Context, sql string, args ...any) ([]string, error) {
	rows, err := s.poolFor(ctx).Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if out == nil {
		out = []string{}
	}
	return out, err
}
