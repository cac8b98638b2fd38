package postgres

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/storetest"
)

func TestVaultStoreConformance(t *testing.T) {
	storetest.RunVaults(t, func(t *testing.T) core.VaultStore {
		s, _ := openTest(t, Options{})
		return s
	})
}

func TestEnvironmentStoreConformance(t *testing.T) {
	storetest.RunEnvironments(t, func(t *testing.T) core.EnvironmentStore {
		s, _ := openTest(t, Options{})
		return s
	})
}

func TestInstallationConformance(t *testing.T) {
	storetest.RunInstallations(t, func(t *testing.T) storetest.InstallationStore {
		s, _ := openTest(t, Options{})
		return s
	})
}
