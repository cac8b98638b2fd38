package postgres

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/storetest"
)

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) core.Store {
		s, _ := openTest(t, Options{})
		return s
	})
}

func TestSinkConformance(t *testing.T) {
	storetest.RunSinks(t, func(t *testing.T) storetest.SinkStore {
		s, _ := openTest(t, Options{})
		return s
	})
}
