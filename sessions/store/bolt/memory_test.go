package bolt

import (
	"testing"

	"github.com/switchboardhq/switchboard/sessions/store/storetest"
)

func TestMemoryStoreConformance(t *testing.T) {
	storetest.RunMemory(t, func(t *testing.T) storetest.MemoryStore {
		s, _ := openTemp(t, Options{})
		return s
	})
}
