package core

import "testing"

// TestCommitsLagAll: every open subscription is told it lagged, once
// however often LagAll is called, with its buffered changes kept; a
// closed one is not told.
func TestCommitsLagAll(t *testing.T) {
	s := NewCommits()
	var lags []string
	s.OnLag = func(name string) { lags = append(lags, name) }
	a, b, gone := s.Subscribe("a", 4), s.Subscribe("b", 4), s.Subscribe("gone", 4)
	gone.Close()
	s.Publish(Change{SessionID: "ses_1"})
	s.LagAll()
	s.LagAll()
	for _, sub := range []*Subscription{a, b} {
		select {
		case <-sub.Lagged:
		default:
			t.Fatalf("%s was not told it lagged", sub.Name)
		}
		select {
		case <-sub.Lagged:
			t.Fatalf("%s was told twice", sub.Name)
		default:
		}
		if ch := <-sub.C; ch.SessionID != "ses_1" {
			t.Fatalf("%s lost its buffered change: %+v", sub.Name, ch)
		}
	}
	select {
	case <-gone.Lagged:
		t.Fatal("a closed subscription was told it lagged")
	default:
	}
	if len(lags) != 0 {
		t.Fatalf("OnLag told of %v; no subscriber fell behind", lags)
	}
}
