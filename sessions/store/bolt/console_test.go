package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestConsoleStoreConformance(t *testing.T) {
	storetest.RunConsole(t, func(t *testing.T) storetest.ConsoleStore {
		s, _ := openTemp(t, Options{})
		return s
	})
}
