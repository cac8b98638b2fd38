package core

import (
	"errors"
	"slices"
	"strconv"
	"testing"
)

func TestEachItem(t *testing.T) {
	items := []string{"1", "2", "3", "4", "5"}
	list := func(after string) ([]string, bool, error) {
		i := 0
		if after != "" {
			n, _ := strconv.Atoi(after)
			i = n
		}
		end := min(i+2, len(items))
		return items[i:end], end < len(items), nil
	}
	id := func(s string) string { return s }
	var seen []string
	if err := EachItem(list, id, func(s string) bool { seen = append(seen, s); return true }); err != nil || !slices.Equal(seen, items) {
		t.Fatalf("all: %v, %v", seen, err)
	}
	seen = nil
	if err := EachItem(list, id, func(s string) bool { seen = append(seen, s); return s != "3" }); err != nil || !slices.Equal(seen, items[:3]) {
		t.Fatalf("stopped at 3: %v, %v", seen, err)
	}
	boom := errors.New("boom")
	if err := EachItem(func(string) ([]string, bool, error) { return nil, false, boom }, id, func(string) bool { return true }); !errors.Is(err, boom) {
		t.Fatalf("error: %v", err)
	}
}
