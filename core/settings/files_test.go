package settings_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/settings"
)

func TestDir(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		wantErr   string
	}{
		{"created", filepath.Join(base, "a", "b"), ""},
		{"existing", base, ""},
		{"a file in the way", filepath.Join(file, "d"), "X_DIR=\"" + filepath.Join(file, "d") + "\": mkdir " + file + ": not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := settings.Values{"X_DIR": tt.dir}.Dir("X_DIR")
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.dir {
				t.Fatalf("got %q, %v", got, err)
			}
			if fi, err := os.Stat(got); err != nil || !fi.IsDir() {
				t.Fatalf("%s: %v", got, err)
			}
		})
	}
	t.Run("private when created", func(t *testing.T) {
		got, err := settings.Values{"X_DIR": filepath.Join(base, "private")}.Dir("X_DIR")
		if err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(got); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s: %v, %v", got, fi.Mode(), err)
		}
	})
	t.Run("made absolute", func(t *testing.T) {
		t.Chdir(base)
		got, err := settings.Values{"X_DIR": "rel"}.Dir("X_DIR")
		if err != nil || !filepath.IsAbs(got) || filepath.Base(got) != "rel" {
			t.Fatalf("got %q, %v", got, err)
		}
	})
}

func TestSecret(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept")
	if err := os.WriteFile(kept, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, value, file string
		want              string // a regexp
		created           bool
		wantErr           string
	}{
		{"the value wins", "given", kept, "^given$", false, ""},
		{"the file's", "", kept, "^from-file$", false, ""},
		{"generated", "", filepath.Join(dir, "new"), "^[0-9a-f]{64}$", true, ""},
		{"an empty file", "", empty, "", false, "X_KEY: " + empty + " is empty: delete it to generate a new one"},
		{"no directory", "", filepath.Join(dir, "none", "key"), "", false, "X_KEY: create " + filepath.Join(dir, "none", "key") + ": open " + filepath.Join(dir, "none", "key") + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, created, err := settings.Values{"X_KEY": tt.value}.Secret("X_KEY", tt.file)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !regexp.MustCompile(tt.want).MatchString(got) || created != tt.created {
				t.Fatalf("got %q, created %v, %v", got, created, err)
			}
		})
	}
	t.Run("generated once, private", func(t *testing.T) {
		file := filepath.Join(dir, "once")
		first, created, err := settings.Values{}.Secret("X_KEY", file)
		if err != nil || !created {
			t.Fatalf("first: %v, created %v", err, created)
		}
		again, created, err := settings.Values{}.Secret("X_KEY", file)
		if err != nil || created || again != first {
			t.Fatalf("again: %q (first %q), created %v, %v", again, first, created, err)
		}
		fi, err := os.Stat(file)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", file, fi.Mode(), err)
		}
		raw, _ := os.ReadFile(file)
		if strings.TrimSpace(string(raw)) != first {
			t.Fatalf("file holds %q", raw)
		}
	})
}
