package core

import (
	"errors"
	"testing"
)

func TestMemoryStoreNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"team-notes": true, "ops.v2": true, "A_1": true,
		"": false, "a/b": false, "-lead": false, "with space": false, "mem_01jc5v3w8m9q2r7t4y6u0p1s2d": false,
	} {
		err := (&MemoryStore{Name: name}).Validate()
		if ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("name %q: err %v, want ok=%v", name, err, ok)
		}
	}
}
