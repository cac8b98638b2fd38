package webhooks

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// secretPrefix marks a Standard Webhooks secret: "whsec_" + base64.
const secretPrefix = "whsec_"

// generateKeyword asks for a generated secret in a create body.
const generateKeyword = "generate"

// The Standard Webhooks spec wants secrets of 24 to 64 random bytes.
const (
	minSecretBytes = 24
	maxSecretBytes = 64
	newSecretBytes = 32
)

// GenerateSecret returns a new random secret in the whsec_ form.
func GenerateSecret() string {
	b := make([]byte, newSecretBytes)
	if _, err := rand.Read(b); err != nil {
		panic("webhooks: crypto/rand failed: " + err.Error())
	}
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// CheckSecret validates a caller's secret: whsec_ and the base64 of 24 to
// 64 bytes. Its error says what is wrong, for the caller to name the field.
func CheckSecret(s string) error {
	rest, ok := strings.CutPrefix(s, secretPrefix)
	if !ok {
		return fmt.Errorf("want %q followed by base64, or %q", secretPrefix, generateKeyword)
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return fmt.Errorf("the part after %q is not base64", secretPrefix)
	}
	if len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return fmt.Errorf("the key is %d bytes; want %d to %d", len(key), minSecretBytes, maxSecretBytes)
	}
	return nil
}

// signer signs with the Standard Webhooks library.
func signer(secret string) (*standardwebhooks.Webhook, error) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	return wh, nil
}
