// Package settings reads a command's configuration. Each setting is an
// Option: an environment variable with a matching flag and a default.
// Parse takes flags over environment over defaults; the typed getters of
// Values check a value and, when it is wrong, return one line that names
// the variable, so that a misconfiguration stops a command at start with
// an error its operator can act on. Dir and Secret also reach the file
// system: a directory is created when missing, and a secret nobody set is
// generated into a file, which then keeps it across restarts.
//
// The package that owns a setting declares its Option and reads it; the
// command only concatenates the lists it runs with.
package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/command"
)

// Option is one setting: an environment variable with a matching flag.
type Option struct {
	Env     string // the variable, e.g. SWITCHBOARD_ADDR
	Flag    string // the flag without its dash, e.g. addr
	Default string
	Usage   string
}

// Values are parsed option values, by environment variable name.
type Values map[string]string

// Parse reads flags over environment over defaults, with surrounding
// spaces trimmed. Given -h or --help it writes the usage of switchboard
// name to help and returns flag.ErrHelp; a flag error is returned for the
// caller to report.
func Parse(name string, opts []Option, args []string, getenv func(string) string, help io.Writer) (Values, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	vals := map[string]*string{}
	// The flags' defaults are the built-in ones: the environment is applied
	// after parsing, so help, which prints defaults, never shows a value
	// the environment holds (a token, a key, a DSN with its password).
	for _, o := range opts {
		vals[o.Env] = fs.String(o.Flag, o.Default, o.Usage+" ($"+o.Env+")")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(help, "usage: switchboard %s [flags]\n\nEach flag has an environment variable, shown after its description; a flag\nwins over its variable.\n\nflags:\n%s", name, command.FlagUsage(fs))
		}
		return nil, err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	v := Values{}
	for _, o := range opts {
		val := *vals[o.Env]
		if env := getenv(o.Env); env != "" && !given[o.Flag] {
			val = env
		}
		v[o.Env] = strings.TrimSpace(val)
	}
	return v, nil
}

// Int is a whole number ≥ min.
func (v Values) Int(name string, min int) (int, error) {
	n, err := strconv.Atoi(v[name])
	if err != nil || n < min {
		return 0, fmt.Errorf("%s=%q: want a whole number ≥ %d", name, v[name], min)
	}
	return n, nil
}

// Float is a number from min to max.
func (v Values) Float(name string, min, max float64) (float64, error) {
	f, err := strconv.ParseFloat(v[name], 64)
	if err != nil || f < min || f > max {
		return 0, fmt.Errorf("%s=%q: want a number from %g to %g", name, v[name], min, max)
	}
	return f, nil
}

// Duration is a whole number of seconds, at least one.
func (v Values) Duration(name string) (time.Duration, error) {
	n, err := v.Int(name, 1)
	return time.Duration(n) * time.Second, err
}

// Bool is true or false (as strconv.ParseBool spells them).
func (v Values) Bool(name string) (bool, error) {
	b, err := strconv.ParseBool(v[name])
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", name, v[name])
	}
	return b, nil
}

// List is a comma-separated list, each item trimmed, empty ones dropped.
func (v Values) List(name string) []string {
	var out []string
	for item := range strings.SplitSeq(v[name], ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// URL is an absolute http or https URL.
func (v Values) URL(name string) (string, error) {
	s := v[name]
	if u, err := url.Parse(s); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("%s=%q: want an http(s) URL", name, s)
	}
	return s, nil
}
