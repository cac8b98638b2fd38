package settings

import (
	"fmt"
	"io"
	"log/slog"
)

// LogOptions are the settings of Logger; a command that logs includes
// them in its list.
func LogOptions() []Option {
	return []Option{
		{Env: "SWITCHBOARD_LOG_LEVEL", Flag: "log-level", Default: "info", Usage: "debug, info, warn or error"},
		{Env: "SWITCHBOARD_LOG_FORMAT", Flag: "log-format", Default: "text", Usage: "text or json"},
	}
}

// Logger builds the process logger, writing to w, from the LogOptions
// values.
func (v Values) Logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(v["SWITCHBOARD_LOG_LEVEL"])); err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_LOG_LEVEL=%q: want debug, info, warn or error", v["SWITCHBOARD_LOG_LEVEL"])
	}
	ho := &slog.HandlerOptions{Level: level}
	switch v["SWITCHBOARD_LOG_FORMAT"] {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("SWITCHBOARD_LOG_FORMAT=%q: want text or json", v["SWITCHBOARD_LOG_FORMAT"])
}
