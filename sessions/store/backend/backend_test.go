package backend

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		value    string
		postgres bool
		err      string // in the error, which names SWITCHBOARD_STORE; "" for none
	}{
		{"", false, ""},
		{"postgres://bob:pw@db:5432/switchboard", true, ""},
		{"postgresql://db/switchboard?sslmode=verify-full", true, ""},
		{"POSTGRES://db/switchboard", true, ""},
		{"mysql://bob:s3cr3t-pw@db/switchboard", false, `unknown scheme "mysql"`},
		{"bob:s3cr3t-pw@db/switchboard", false, "not a store"},
		{"host=db password=s3cr3t-pw", false, "not a store"},
		{"bolt:s3cr3t-pw@x://db", false, "not a store"},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			c, err := LoadConfig(map[string]string{"SWITCHBOARD_STORE": tt.value})
			if tt.err == "" {
				if err != nil || c.Postgres() != tt.postgres || (c.Postgres() && c.DSN != tt.value) {
					t.Fatalf("LoadConfig = %+v, %v; want postgres %v", c, err, tt.postgres)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_STORE") || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("LoadConfig = %+v, %v; want an error naming SWITCHBOARD_STORE with %q", c, err, tt.err)
			}
			if strings.Contains(err.Error(), "s3cr3t-pw") {
				t.Fatalf("the error quotes the password: %v", err)
			}
		})
	}
}

// TestOpenBolt: an empty setting opens the bbolt file in the data dir,
// which a second process cannot open while the first holds it.
func TestOpenBolt(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(t.Context(), Config{}, Env{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if status, ok := st.Ready(t.Context()); !ok {
		t.Fatalf("Ready = %q", status)
	}
	_, err = Open(t.Context(), Config{}, Env{DataDir: dir})
	if !errors.Is(err, core.ErrLocked) || !strings.Contains(err.Error(), "SWITCHBOARD_DATA_DIR="+dir) {
		t.Fatalf("second open = %v, want ErrLocked naming SWITCHBOARD_DATA_DIR", err)
	}
}

func TestOneLine(t *testing.T) {
	inner := errors.New("failed to connect:\n\ta: refused\n\tb: refused")
	err := oneLine{inner}
	if got, want := err.Error(), "failed to connect: a: refused b: refused"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, inner) {
		t.Fatal("the cause is not wrapped")
	}
}
