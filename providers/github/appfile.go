package github

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/switchboardhq/switchboard/core"
)

// AppFile keeps, in the gateway's data directory and sealed with the
// master key, the App the manifest flow created; the gateway acts as it
// at start when no GITHUB_APP_* variable is set.
const AppFile = "github-app.sealed"

// appAAD binds the sealed bytes to this use: a value sealed for anything
// else does not open as an App.
const appAAD = "switchboard github app"

// SaveApp seals app into dataDir (0600, replaced whole, so a crash leaves
// the old App or the new one).
func SaveApp(dataDir string, sealer core.Sealer, app App) error {
	raw, err := json.Marshal(app)
	if err != nil {
		return err
	}
	sealed, err := sealer.Seal(raw, []byte(appAAD))
	if err != nil {
		return fmt.Errorf("seal the github app: %w", err)
	}
	path := filepath.Join(dataDir, AppFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, sealed, 0o600); err != nil {
		return fmt.Errorf("save the github app: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save the github app: %w", err)
	}
	return nil
}

// LoadApp opens the App SaveApp kept in dataDir; found is false when
// there is none. Its errors name the setting to look at, since they stop
// the gateway at start.
func LoadApp(dataDir string, sealer core.Sealer) (app App, found bool, err error) {
	path := filepath.Join(dataDir, AppFile)
	sealed, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return App{}, false, nil
	}
	if err != nil {
		return App{}, false, fmt.Errorf("SWITCHBOARD_DATA_DIR: %w", err)
	}
	raw, err := sealer.Open(sealed, []byte(appAAD))
	if err != nil {
		return App{}, false, fmt.Errorf("%s does not open with SWITCHBOARD_MASTER_KEY: %w", path, err)
	}
	if err := json.Unmarshal(raw, &app); err != nil {
		return App{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return app, true, nil
}
