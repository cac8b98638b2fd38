package record

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
)

// Encode is the stored form of a record (what names its kind in errors,
// id the record): its JSON as core.EncodeJSON writes it, the bytes both
// stores keep and every earlier release wrote, so a field added to a
// core type is stored by both stores without a change here.
func Encode(what, id string, v any) ([]byte, error) {
	raw, err := core.EncodeJSON(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", what, id, err)
	}
	return raw, nil
}

// Decode reads a record Encode stored (what names its kind in errors).
func Decode[T any](what string, raw []byte) (*T, error) {
	out := new(T)
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	return out, nil
}

// Refused is the error of a create named by op (a store's "create
// agent"), unless it says what to change, a conflict or something
// invalid, which the API shows as it is.
func Refused(op string, err error) error {
	if errors.Is(err, core.ErrConflict) || errors.Is(err, core.ErrInvalid) {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}

// newID gives a new record its id: made of prefix when none was given,
// else the given one, which must look like one. op ("create vault") and
// noun ("a vault id") name the refusal.
func newID(id *string, prefix, op, noun string) error {
	if *id == "" {
		*id = core.NewID(prefix)
	}
	if !core.HasPrefix(*id, prefix) {
		return fmt.Errorf("%s: id %q is not %s: %w", op, *id, noun, core.ErrInvalid)
	}
	return nil
}

// SessionMetadata reads only the metadata of a stored session record: a
// delivery's envelope carries it, and decoding the whole record for it
// cost every attempt as much as its event.
func SessionMetadata(raw []byte) (map[string]string, error) {
	var s struct {
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("decode session: %w", err)
	}
	return s.Metadata, nil
}
