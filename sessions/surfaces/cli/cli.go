// Package cli is switchboard's command-line client: the agent, session
// and skill commands, which drive a gateway over its /v1 API with sessions/surfaces/client.
// Each is a command.Command for the binary's list. A command finds the
// server at --url, $SWITCHBOARD_URL or the gateway's default address, and
// its token at --token, $SWITCHBOARD_TOKEN, $SWITCHBOARD_ADMIN_TOKEN or
// the token file the gateway writes, <data dir>/admin-token; --json
// prints JSON. Errors go to stderr with a non-zero exit: 2 for a
// malformed command line, 1 for the rest (the API's message among them).
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/command"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// headerTimeout bounds the wait for an answer's headers, so a stuck
// server fails a command instead of hanging it; it does not limit how long
// an event stream stays open.
const headerTimeout = time.Minute

// cliIO is the process's environment as the CLI commands see it, and
// the defaults they fall back on.
type cliIO struct {
	getenv   func(string) string
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer
	defaults Defaults
}

// usageError is a malformed command line: exit code 2 and a usage hint.
type usageError struct {
	cmd *subcommand
	msg string
}

func (e *usageError) Error() string { return e.msg }

// subcommand is one command of a group (agent create, session send):
// its flags, including the common ones, and how to reach the server.
type subcommand struct {
	env   cliIO
	name  string // "session send"
	usage string // "session send ID TEXT [flags]"
	// summary says what the command does, under its usage in its help.
	summary string
	fs      *flag.FlagSet
	url     string
	token   string
	json    bool
}

func newSubcommand(env cliIO, name, usage string) *subcommand {
	c := newServerCommand(env, name, usage)
	c.fs.BoolVar(&c.json, "json", false, "print JSON (NDJSON when following)")
	return c
}

// newServerCommand is a command with the flags that find the server and
// the token, and no output format of its own.
func newServerCommand(env cliIO, name, usage string) *subcommand {
	group, _, _ := strings.Cut(name, " ")
	c := &subcommand{env: env, name: name, usage: group + " " + usage, fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	// Errors are reported once, by cli, in its own format.
	c.fs.SetOutput(io.Discard)
	c.fs.StringVar(&c.url, "url", "", "server base `URL` ($SWITCHBOARD_URL, default "+env.defaults.URL+")")
	c.fs.StringVar(&c.token, "token", "", "bearer `TOKEN` ($SWITCHBOARD_TOKEN, default: <data dir>/admin-token)")
	return c
}

// parse reads the flags, before or after the positional arguments, and
// checks that exactly n positionals were given.
func (c *subcommand) parse(args []string, n int) ([]string, error) {
	return c.parseBetween(args, n, n)
}

// parseBetween is parse for a command taking from least to most
// positionals.
func (c *subcommand) parseBetween(args []string, least, most int) ([]string, error) {
	err := c.fs.Parse(reorder(c.fs, args))
	if errors.Is(err, flag.ErrHelp) {
		return nil, c.help()
	}
	if err != nil {
		return nil, &usageError{cmd: c, msg: err.Error()}
	}
	pos := c.fs.Args()
	switch {
	case least == most && len(pos) != least:
		return nil, &usageError{cmd: c, msg: fmt.Sprintf("%s: want %d argument(s), got %d", c.name, least, len(pos))}
	case len(pos) < least || len(pos) > most:
		return nil, &usageError{cmd: c, msg: fmt.Sprintf("%s: want %d to %d arguments, got %d", c.name, least, most, len(pos))}
	}
	return pos, nil
}

// help prints the command's usage, made from its flags, and returns
// flag.ErrHelp, which exits 0.
func (c *subcommand) help() error {
	text := "usage: switchboard " + c.usage + "\n\n"
	if c.summary != "" {
		text += c.summary + "\n\n"
	}
	fmt.Fprint(c.env.stdout, text+"flags:\n"+command.FlagUsage(c.fs))
	return flag.ErrHelp
}

// start parses the command line (n positional arguments) and makes the
// API client: the opening of every command that needs nothing between.
func (c *subcommand) start(args []string, n int) ([]string, *client.Client, error) {
	pos, err := c.parse(args, n)
	if err != nil {
		return nil, nil, err
	}
	cl, err := c.client()
	if err != nil {
		return nil, nil, err
	}
	return pos, cl, nil
}

// given reports whether the flag was on the command line.
func (c *subcommand) given(name string) bool {
	found := false
	c.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// reorder moves flags ahead of positional arguments, since the flag
// package stops at the first positional. A flag's value is the next
// argument unless it is a bool flag or written as -flag=value; "--" ends
// the flags and "-" alone (stdin) is positional.
func reorder(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBool(f) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return append(append(flags, "--"), pos...)
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// client resolves the server and token: flags, then environment, then the
// local gateway's defaults.
func (c *subcommand) client() (*client.Client, error) {
	url := c.baseURL()
	token, err := c.resolveToken()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ResponseHeaderTimeout = headerTimeout
	return client.New(url, token, &http.Client{Transport: tr}), nil
}

// baseURL is the server the command talks to.
func (c *subcommand) baseURL() string {
	return firstOf(c.url, c.env.getenv("SWITCHBOARD_URL"), c.env.defaults.URL)
}

// resolveToken also accepts SWITCHBOARD_ADMIN_TOKEN, the variable serve
// takes the token from, since a gateway started with it writes no token
// file.
func (c *subcommand) resolveToken() (string, error) {
	if t := firstOf(c.token, c.env.getenv("SWITCHBOARD_TOKEN"), c.env.getenv("SWITCHBOARD_ADMIN_TOKEN")); t != "" {
		return t, nil
	}
	path := filepath.Join(firstOf(c.env.getenv("SWITCHBOARD_DATA_DIR"), c.env.defaults.DataDir), "admin-token")
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("no token: pass --token or set SWITCHBOARD_TOKEN (%w)", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("no token: %s is empty; pass --token or set SWITCHBOARD_TOKEN", path)
	}
	return t, nil
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// printJSON writes v indented, or as one line when following.
func (c *subcommand) printJSON(v any, oneLine bool) error {
	enc := json.NewEncoder(c.env.stdout)
	enc.SetEscapeHTML(false)
	if !oneLine {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// readText returns s, or all of stdin when s is "-" (minus one trailing
// newline, which a shell pipeline adds).
func (c *subcommand) readText(s string) (string, error) {
	if s != "-" {
		return s, nil
	}
	b, err := io.ReadAll(c.env.stdin)
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r"), nil
}

// kvFlag collects repeated key=value flags into a map.
type kvFlag map[string]string

func (m kvFlag) String() string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k+"="+m[k])
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

func (m kvFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q: want key=value", s)
	}
	m[k] = v
	return nil
}

// Variables are the environment variables the commands read that are no
// setting of serve.
func Variables() []string { return []string{"SWITCHBOARD_URL", "SWITCHBOARD_TOKEN"} }

// listFlag collects a repeated flag's values in order.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
