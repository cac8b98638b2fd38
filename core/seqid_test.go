package core

import (
	"slices"
	"testing"
	"time"
)

func TestNewSeqIDSortsBySeq(t *testing.T) {
	at := time.Now()
	var ids []string
	for seq := uint64(1); seq <= 300; seq++ {
		ids = append(ids, NewSeqID("dlv", at, seq))
	}
	if !slices.IsSorted(ids) {
		t.Fatalf("ids of one millisecond do not sort by seq: %v", ids[:5])
	}
	if !HasPrefix(ids[0], "dlv") || NewSeqID("dlv", at.Add(time.Millisecond), 1) <= ids[len(ids)-1] {
		t.Fatalf("id %s: wrong form, or a later millisecond sorts first", ids[0])
	}
}
