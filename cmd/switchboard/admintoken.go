package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// tokenShownFile records, in the data directory, that the generated admin
// token was printed: it holds a fingerprint of the token shown, never the
// token. A start that fails before serving leaves the token unshown, so
// the next start that serves prints it; a token file replaced by hand
// (or deleted and generated again) no longer matches, and is printed too.
const tokenShownFile = "admin-token.shown"

// tokenFingerprint names a token without revealing it.
func tokenFingerprint(token string) string {
	sum := sha256.Sum256([]byte("switchboard admin token shown\x00" + token))
	return hex.EncodeToString(sum[:])
}

// tokenShown reports whether token was printed by an earlier start on
// dataDir.
func tokenShown(dataDir, token string) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, tokenShownFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return strings.TrimSpace(string(b)) == tokenFingerprint(token), nil
}

// showAdminToken prints the generated admin token, unless a start already
// did, and then records that it was shown. serve calls it once it
// listens and serves: a start that fails earlier prints nothing and
// records nothing. A token given in SWITCHBOARD_ADMIN_TOKEN is never
// printed.
func showAdminToken(w io.Writer, cfg *serveConfig) error {
	if !cfg.adminTokenGenerated {
		return nil
	}
	shown, err := tokenShown(cfg.dataDir, cfg.adminToken)
	if err != nil || shown {
		return err
	}
	path := filepath.Join(cfg.dataDir, "admin-token")
	if _, err := fmt.Fprintf(w, "admin token (saved in %s, shown once): %s\n", path, cfg.adminToken); err != nil {
		return fmt.Errorf("print the admin token: %w", err)
	}
	return writeFileAtomic(filepath.Join(cfg.dataDir, tokenShownFile), tokenFingerprint(cfg.adminToken)+"\n")
}
