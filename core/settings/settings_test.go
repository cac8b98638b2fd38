package settings_test

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
)

func TestParse(t *testing.T) {
	opts := []settings.Option{
		{Env: "X_ADDR", Flag: "addr", Default: "127.0.0.1:8080", Usage: "listen address"},
		{Env: "X_NAME", Flag: "name", Default: "", Usage: "a name"},
	}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want settings.Values
	}{
		{"defaults", nil, nil, settings.Values{"X_ADDR": "127.0.0.1:8080", "X_NAME": ""}},
		{"environment over default", nil, map[string]string{"X_ADDR": ":9"}, settings.Values{"X_ADDR": ":9", "X_NAME": ""}},
		{"flag over environment", []string{"-addr", ":7"}, map[string]string{"X_ADDR": ":9"}, settings.Values{"X_ADDR": ":7", "X_NAME": ""}},
		{"spaces trimmed", []string{"--name= n "}, map[string]string{"X_ADDR": " :9\n"}, settings.Values{"X_ADDR": ":9", "X_NAME": "n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := settings.Parse("x", opts, tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestParseHelpAndErrors(t *testing.T) {
	opts := []settings.Option{{Env: "X_ADDR", Flag: "addr", Default: "a", Usage: "listen address"}}
	var out bytes.Buffer
	_, err := settings.Parse("x", opts, []string{"--help"}, func(string) string { return "" }, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"usage: switchboard x [flags]", "  --addr STRING\n      listen address ($X_ADDR) (default \"a\")"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("help %q does not contain %q", out.String(), want)
		}
	}
	out.Reset()
	_, err = settings.Parse("x", opts, []string{"-nope"}, func(string) string { return "" }, &out)
	if err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -nope") || out.Len() > 0 {
		t.Fatalf("unknown flag: %v, output %q", err, out.String())
	}
}

func TestGetters(t *testing.T) {
	v := settings.Values{"N": "12", "NEG": "-5", "WORD": "many", "F": "0.5", "BIG": "2", "T": "true", "URL": "https://api.example.com/", "HOST": "example.com", "EMPTY": ""}
	tests := []struct {
		name    string
		get     func() (any, error)
		want    any
		wantErr string
	}{
		{"int", func() (any, error) { return v.Int("N", 1) }, 12, ""},
		{"int below min", func() (any, error) { return v.Int("NEG", 0) }, 0, `NEG="-5": want a whole number ≥ 0`},
		{"int not a number", func() (any, error) { return v.Int("WORD", 1) }, 0, `WORD="many": want a whole number ≥ 1`},
		{"float", func() (any, error) { return v.Float("F", 0, 1) }, 0.5, ""},
		{"float out of range", func() (any, error) { return v.Float("BIG", 0, 1) }, 0.0, `BIG="2": want a number from 0 to 1`},
		{"float small range", func() (any, error) { return v.Float("BIG", 0.01, 1024) }, 2.0, ""},
		{"duration", func() (any, error) { return v.Duration("N") }, 12 * time.Second, ""},
		{"duration of zero", func() (any, error) { return v.Duration("EMPTY") }, time.Duration(0), `EMPTY="": want a whole number ≥ 1`},
		{"bool", func() (any, error) { return v.Bool("T") }, true, ""},
		{"bool not one", func() (any, error) { return v.Bool("WORD") }, false, `WORD="many": want true or false`},
		{"url", func() (any, error) { return v.URL("URL") }, "https://api.example.com/", ""},
		{"url without scheme", func() (any, error) { return v.URL("HOST") }, "", `HOST="example.com": want an http(s) URL`},
		{"url empty", func() (any, error) { return v.URL("EMPTY") }, "", `EMPTY="": want an http(s) URL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.get()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestLogger(t *testing.T) {
	tests := []struct {
		level, format string
		wantErr       string
		wantOut       string
	}{
		{"info", "text", "", "level=INFO msg=hello"},
		{"debug", "json", "", `"msg":"hello"`},
		{"chatty", "text", `SWITCHBOARD_LOG_LEVEL="chatty": want debug, info, warn or error`, ""},
		{"info", "xml", `SWITCHBOARD_LOG_FORMAT="xml": want text or json`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.level+"/"+tt.format, func(t *testing.T) {
			var out bytes.Buffer
			log, err := settings.Values{"SWITCHBOARD_LOG_LEVEL": tt.level, "SWITCHBOARD_LOG_FORMAT": tt.format}.Logger(&out)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			log.Info("hello")
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Fatalf("logged %q, want %q in it", out.String(), tt.wantOut)
			}
		})
	}
}

// TestLogOptionsDefaultsBuildALogger: the defaults are valid values.
func TestLogOptionsDefaultsBuildALogger(t *testing.T) {
	v, err := settings.Parse("x", settings.LogOptions(), nil, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Logger(io.Discard); err != nil {
		t.Fatal(err)
	}
}

// TestHelpShowsNoEnvironmentValue: help prints each flag's built-in
// default, never what its variable holds: operators paste help into
// tickets, and the variables hold tokens, keys and DSNs with passwords.
func TestHelpShowsNoEnvironmentValue(t *testing.T) {
	opts := []settings.Option{
		{Env: "X_TOKEN", Flag: "token", Default: "", Usage: "a token"},
		{Env: "X_ADDR", Flag: "addr", Default: "127.0.0.1:8080", Usage: "listen address"},
	}
	env := map[string]string{"X_TOKEN": "CANARY-SECRET", "X_ADDR": "CANARY-ADDR"}
	var out bytes.Buffer
	_, err := settings.Parse("x", opts, []string{"--help"}, func(k string) string { return env[k] }, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	if strings.Contains(out.String(), "CANARY") {
		t.Fatalf("help shows a value from the environment:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `(default "127.0.0.1:8080")`) {
		t.Fatalf("help lost the built-in default:\n%s", out.String())
	}
}
