package postgres

import (
	"net/url"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// replica opens another store on the test's schema, as a second gateway
// would; its connections carry a name of their own, so the test can see
// them wait for a lock.
func replica(t *testing.T, dsn string) (*Store, string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := core.NewID("replica")
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	s, err := Open(t.Context(), u.String(), Options{})
	if err != nil {
		t.Fatalf("open a replica: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, name
}

// waitForLockWait returns once a connection of the replica named name
// waits for a lock; it fails when went is closed first (the replica went
// ahead without waiting) or the test's time runs out.
func waitForLockWait(t *testing.T, admin *Store, name string, went <-chan struct{}) {
	t.Helper()
	for {
		var n int
		err := admin.pool.QueryRow(t.Context(),
			"SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", name).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		select {
		case <-went:
			t.Fatal("the replica went ahead instead of waiting for the lock")
		case <-t.Context().Done():
			t.Fatal("the replica never waited for the lock")
		case <-time.After(5 * time.Millisecond):
		}
	}
}
