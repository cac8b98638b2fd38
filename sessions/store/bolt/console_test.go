package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestConsoleStoreConformance(t *testing.T) { storetest.RunConsole(t, fresh) }
