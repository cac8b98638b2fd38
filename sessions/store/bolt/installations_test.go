package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestInstallationConformance(t *testing.T) {
	storetest.RunInstallations(t, func(t *testing.T) storetest.InstallationStore {
		s, _ := openTemp(t, Options{})
		return s
	})
}

func TestSinkConformance(t *testing.T) {
	storetest.RunSinks(t, func(t *testing.T) storetest.SinkStore {
		s, _ := openTemp(t, Options{})
		return s
	})
}
