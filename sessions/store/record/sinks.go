package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// ValidSink refuses what the bbolt store cannot key (a sink name with
// 0x00), so both stores accept the same names.
func ValidSink(sink, sessionID string) error {
	if sink == "" || strings.ContainsRune(sink, 0) || sessionID == "" {
		return fmt.Errorf("sink %q, session %q: %w", sink, sessionID, core.ErrInvalid)
	}
	return nil
}

// EncodeSinkPosition is the stored form of a sink's position in a
// session's log, the sink and session checked (ValidSink): its state
// compacted, so that what a read returns is what was stored.
func EncodeSinkPosition(sink, sessionID string, p core.SinkPosition) ([]byte, error) {
	if err := ValidSink(sink, sessionID); err != nil {
		return nil, err
	}
	if len(p.State) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, p.State); err != nil {
			return nil, fmt.Errorf("sink state is not json: %v: %w", err, core.ErrInvalid)
		}
		p.State = buf.Bytes()
	}
	v, err := core.EncodeJSON(p)
	if err != nil {
		return nil, fmt.Errorf("encode sink position: %w", err)
	}
	return v, nil
}

// DecodeSinkPosition reads a stored position; none stored (nil) is the
// zero position.
func DecodeSinkPosition(raw []byte) (core.SinkPosition, error) {
	var p core.SinkPosition
	if raw == nil {
		return p, nil
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return core.SinkPosition{}, fmt.Errorf("decode sink position: %w", err)
	}
	return p, nil
}
