package settings

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Dir is a directory, made absolute, and created private to its owner
// when it does not exist.
func (v Values) Dir(name string) (string, error) {
	dir := v[name]
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%s=%q: %w", name, dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("%s=%q: %w", name, dir, err)
	}
	return abs, nil
}

// ReadSecret returns the secret kept in path, as Secret generated it; a
// missing file is an error wrapping fs.ErrNotExist.
func ReadSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty: delete it to generate a new one", path)
	}
	return s, nil
}

// Secret is the value of name or, when it is empty, the secret kept in
// file: generated into it the first time, which created reports, so that
// a secret nobody set survives restarts.
func (v Values) Secret(name, file string) (secret string, created bool, err error) {
	if s := v[name]; s != "" {
		return s, false, nil
	}
	if secret, created, err = secretFile(file); err != nil {
		return "", false, fmt.Errorf("%s: %w", name, err)
	}
	return secret, created, nil
}

// secretFile returns the secret in path, generating 32 random bytes (hex)
// into it with mode 0600 when it does not exist; created says so.
func secretFile(path string) (secret string, created bool, err error) {
	if kept, err := ReadSecret(path); !errors.Is(err, fs.ErrNotExist) {
		return kept, false, err
	}
	raw := make([]byte, 32)
	if _, err := io.ReadFull(rand.Reader, raw); err != nil {
		return "", false, fmt.Errorf("generate %s: %w", path, err)
	}
	s := hex.EncodeToString(raw)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := f.WriteString(s + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return "", false, fmt.Errorf("sync %s: %w", path, err)
	}
	return s, true, f.Close()
}
