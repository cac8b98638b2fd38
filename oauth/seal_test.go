package oauth

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

const testKey = "correct horse battery staple"

func newSealer(t *testing.T, key string) *Sealer {
	t.Helper()
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealRoundTrip(t *testing.T) {
	s := newSealer(t, testKey)
	for _, pt := range [][]byte{nil, []byte("x"), []byte(`{"token":"tok_secret_value"}`), bytes.Repeat([]byte("a"), 1<<16)} {
		sealed, err := s.Seal(pt, []byte("vcr_1"))
		if err != nil {
			t.Fatal(err)
		}
		if sealed[0] != sealVersion || len(sealed) != 1+nonceSize+len(pt)+16 {
			t.Fatalf("sealed form: version %d, %d bytes for %d of plaintext", sealed[0], len(sealed), len(pt))
		}
		if len(pt) >= 8 && bytes.Contains(sealed, pt) { // a byte or two may occur by chance
			t.Fatal("plaintext visible in the sealed value")
		}
		got, err := s.Open(sealed, []byte("vcr_1"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, pt) {
			t.Fatalf("round trip = %q, want %q", got, pt)
		}
		// A second sealer from the same key (a restart) opens it too.
		if _, err := newSealer(t, testKey).Open(sealed, []byte("vcr_1")); err != nil {
			t.Fatalf("same key, new sealer: %v", err)
		}
	}
}

func TestSealNoncesDiffer(t *testing.T) {
	s := newSealer(t, testKey)
	a, _ := s.Seal([]byte("same"), nil)
	b, _ := s.Seal([]byte("same"), nil)
	if bytes.Equal(a, b) {
		t.Fatal("two seals of the same value are identical: nonce reused")
	}
}

func TestOpenFails(t *testing.T) {
	s := newSealer(t, testKey)
	sealed, err := s.Seal([]byte("tok_secret_value"), []byte("vcr_1"))
	if err != nil {
		t.Fatal(err)
	}
	tamper := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	tests := []struct {
		name   string
		sealer *Sealer
		in     []byte
		aad    string
		want   string
	}{
		{"wrong key", newSealer(t, testKey+"!"), sealed, "vcr_1", "authentication failed"},
		{"wrong aad", s, sealed, "vcr_2", "authentication failed"},
		{"no aad", s, sealed, "", "authentication failed"},
		{"tampered nonce", s, tamper(1), "vcr_1", "authentication failed"},
		{"tampered ciphertext", s, tamper(1 + nonceSize), "vcr_1", "authentication failed"},
		{"tampered tag", s, tamper(len(sealed) - 1), "vcr_1", "authentication failed"},
		{"truncated", s, sealed[:len(sealed)-1], "vcr_1", "authentication failed"},
		{"too short", s, sealed[:1+nonceSize+15], "vcr_1", "truncated"},
		{"empty", s, nil, "vcr_1", "empty"},
		{"unknown version", s, append([]byte{2}, sealed[1:]...), "vcr_1", "unknown format version 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.sealer.Open(tc.in, []byte(tc.aad))
			if err == nil {
				t.Fatalf("Open succeeded with %q", got)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "tok_secret_value") {
				t.Fatalf("error leaks the plaintext: %v", err)
			}
		})
	}
}

func TestNewSealerRefusesShortKey(t *testing.T) {
	for _, k := range []string{"", "short"} {
		if _, err := NewSealer(k); err == nil || !strings.Contains(err.Error(), "master key") {
			t.Fatalf("NewSealer(%q) err = %v, want a master key error", k, err)
		}
	}
}

// TestKeyCheck: the check value is the same for the same key across
// sealers, differs between keys, and is not the key.
func TestKeyCheck(t *testing.T) {
	a := newSealer(t, testKey).KeyCheck()
	tests := []struct {
		name  string
		other string
		same  bool
	}{
		{"same key, another sealer", testKey, true},
		{"another key", testKey + "!", false},
		{"a prefix of the key", testKey[:len(testKey)-1], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newSealer(t, tt.other).KeyCheck(); (got == a) != tt.same {
				t.Fatalf("KeyCheck(%q) = %s, KeyCheck(%q) = %s; want equal: %v", tt.other, got, testKey, a, tt.same)
			}
		})
	}
	if len(a) != 64 || strings.Contains(a, testKey) || strings.Contains(a, hex.EncodeToString([]byte(testKey))) {
		t.Fatalf("KeyCheck = %q: want 64 hex digits that do not hold the key", a)
	}
}
