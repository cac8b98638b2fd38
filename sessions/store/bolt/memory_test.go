package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestMemoryStoreConformance(t *testing.T) { storetest.RunMemory(t, fresh) }
