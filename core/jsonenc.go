package core

import (
	"bytes"
	"encoding/json"
)

// EncodeJSON marshals v as the stores keep records: without HTML escaping
// and without a trailing newline, so raw JSON bodies are stored byte for
// byte as the caller gave them and both stores hold the same bytes.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
