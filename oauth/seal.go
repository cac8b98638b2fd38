package oauth

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// sealVersion is the first byte of every sealed value. A new key
// derivation or cipher gets a new version, so values sealed by an older
// binary are recognised rather than misread.
const sealVersion byte = 1

// sealInfo labels the HKDF output: the same master key may one day derive
// other keys (signing install state, say), and each use gets its own label
// so the derived keys are independent.
const sealInfo = "switchboard/oauth/seal/v1 aes-256-gcm"

// minMasterKey is the shortest master key accepted. HKDF does not stretch
// a weak key, so a short one is refused instead of silently used.
const minMasterKey = 16

// keyCheckLabel is what KeyCheck authenticates with the master key: its
// own label, so the check value is independent of every derived key.
const keyCheckLabel = "switchboard/master-key-check/v1 hmac-sha256"

const nonceSize = 12

var _ core.Sealer = (*Sealer)(nil)

// Sealer encrypts secrets at rest with AES-256-GCM under a key derived from
// the master key. A sealed value is
//
//	1 version byte (1) ‖ 12-byte random nonce ‖ GCM ciphertext and 16-byte tag
//
// and the aad (the record id, say) is authenticated but not stored, so a
// value copied to another record fails to open.
type Sealer struct {
	aead  cipher.AEAD
	check string
}

// NewSealer derives the sealing key from masterKey with HKDF-SHA256.
func NewSealer(masterKey string) (*Sealer, error) {
	if len(masterKey) < minMasterKey {
		return nil, fmt.Errorf("master key is %d bytes: want at least %d", len(masterKey), minMasterKey)
	}
	key, err := hkdf.Key(sha256.New, []byte(masterKey), nil, sealInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("derive sealing key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("sealing cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("sealing cipher: %w", err)
	}
	m := hmac.New(sha256.New, []byte(masterKey))
	m.Write([]byte(keyCheckLabel))
	return &Sealer{aead: aead, check: hex.EncodeToString(m.Sum(nil))}, nil
}

// KeyCheck is a value derived from the master key (HMAC-SHA256 of a fixed
// label, hex), the same for every process given the same key: a shared
// store keeps it to refuse a process started with another key, whose
// sealed values the others could not open. It reveals nothing of the key
// beyond what a guess can be checked against.
func (s *Sealer) KeyCheck() string { return s.check }

// Seal encrypts plaintext bound to aad.
func (s *Sealer) Seal(plaintext, aad []byte) ([]byte, error) {
	out := make([]byte, 1+nonceSize, 1+nonceSize+len(plaintext)+s.aead.Overhead())
	out[0] = sealVersion
	// Random nonces are safe here: far fewer than 2^32 values are sealed
	// under one key.
	if _, err := rand.Read(out[1 : 1+nonceSize]); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	return s.aead.Seal(out, out[1:1+nonceSize], plaintext, aad), nil
}

// errOpen is deliberately vague about which of the causes it was: GCM
// cannot tell them apart, and the message must not hint at the contents.
var errOpen = errors.New("open sealed value: authentication failed (wrong master key, wrong record, or the value was altered)")

// Open decrypts a value sealed with the same master key and aad.
func (s *Sealer) Open(sealed, aad []byte) ([]byte, error) {
	if len(sealed) == 0 {
		return nil, errors.New("open sealed value: empty")
	}
	if sealed[0] != sealVersion {
		return nil, fmt.Errorf("open sealed value: unknown format version %d (want %d)", sealed[0], sealVersion)
	}
	if len(sealed) < 1+nonceSize+s.aead.Overhead() {
		return nil, fmt.Errorf("open sealed value: truncated (%d bytes)", len(sealed))
	}
	nonce := sealed[1 : 1+nonceSize]
	pt, err := s.aead.Open(nil, nonce, sealed[1+nonceSize:], aad)
	if err != nil {
		return nil, errOpen
	}
	return pt, nil
}
