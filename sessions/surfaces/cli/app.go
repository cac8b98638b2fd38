package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/switchboardhq/switchboard/core/command"
)

// AppSetup is a platform's app set-up command, "switchboard <platform>
// <name>": it prints what to paste or enter on the platform to create
// the gateway's app, for the gateway's public URL. The binary makes one
// per platform that has one, from the platform's module; the CLI names no
// platform.
type AppSetup struct {
	// Platform is the command's name, Label how people write it.
	Platform, Label string
	// Name is the subcommand ("manifest"), Summary what it prints.
	Name, Summary string
	// Switches are its on/off flags.
	Switches []AppSwitch
	// Formats are the formats it prints, the default first ("yaml",
	// "json"), each a flag.
	Formats []string
	// Render makes the set-up.
	Render func(req AppRequest) (AppOutput, error)
}

// AppSwitch is an on/off flag of an app set-up.
type AppSwitch struct{ Flag, Usage string }

// AppRequest is a command line of an app set-up.
type AppRequest struct {
	// PublicURL is --public-url, else $SWITCHBOARD_PUBLIC_URL.
	PublicURL string
	// Set are the switches given on the command line; the others take
	// their defaults from the environment.
	Set    map[string]bool
	Format string
	Getenv func(string) string
}

// AppOutput is what an app set-up prints: the manifest on stdout, so it
// can be piped, and where to paste it and what to do next on stderr.
type AppOutput struct {
	Manifest string
	Steps    []string
}

// Apps are the app set-up commands, one per platform.
func Apps(setups []AppSetup) []command.Command {
	out := make([]command.Command, 0, len(setups))
	for _, a := range setups {
		out = append(out, a.command())
	}
	return out
}

func (a AppSetup) command() command.Command {
	sub := command.Command{Name: a.Name, Usage: a.usage(), Summary: a.Summary, Flags: command.Flags(a.flags(new(appFlags)))}
	return command.Command{
		Name: a.Platform, Usage: a.Platform + " " + a.Name + " [flags]",
		Summary:     "set up the " + a.Label + " app (see " + a.Platform + " --help)",
		Subcommands: []command.Command{sub},
		Run: func(ctx context.Context, env command.Env, args []string) int {
			name := ""
			if len(args) > 0 {
				name, args = args[0], args[1:]
			}
			switch {
			case command.IsHelp(name):
				fmt.Fprint(env.Stdout, a.groupHelp())
				return 0
			case name == a.Name:
				return report(env.Stderr, a.run(env, args))
			}
			fmt.Fprint(env.Stderr, a.groupHelp())
			if name == "" {
				return report(env.Stderr, &usageError{msg: a.Platform + ": missing subcommand"})
			}
			msg := fmt.Sprintf("%s: unknown subcommand %q", a.Platform, name)
			if near := command.Suggest(name, []string{a.Name}); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			return report(env.Stderr, &usageError{msg: msg})
		},
	}
}

func (a AppSetup) usage() string { return a.Platform + " " + a.Name + " [flags]" }

func (a AppSetup) groupHelp() string {
	return "usage: switchboard " + a.Platform + " COMMAND [flags]\n\ncommands:\n" +
		command.Help("switchboard", []command.Command{{Name: a.Name, Usage: a.usage(), Summary: a.Summary}}) +
		"\nrun 'switchboard " + a.Platform + " " + a.Name + " --help' for its flags\n"
}

// appFlags are the values of an app set-up's flags.
type appFlags struct {
	publicURL string
	switches  map[string]*bool
	formats   map[string]*bool
}

func (a AppSetup) flags(f *appFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(a.Platform+" "+a.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.publicURL, "public-url", "", "the gateway's public base `URL` ($SWITCHBOARD_PUBLIC_URL)")
	f.switches, f.formats = map[string]*bool{}, map[string]*bool{}
	for _, s := range a.Switches {
		f.switches[s.Flag] = fs.Bool(s.Flag, false, s.Usage)
	}
	for i, format := range a.Formats {
		usage := "print " + strings.ToUpper(format)
		if i == 0 {
			usage += " (the default)"
		}
		f.formats[format] = fs.Bool(format, false, usage)
	}
	return fs
}

func (a AppSetup) run(env command.Env, args []string) error {
	var f appFlags
	fs := a.flags(&f)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(env.Stdout, "usage: switchboard "+a.usage()+"\n\n"+a.Summary+"\n\nflags:\n"+command.FlagUsage(fs))
		return flag.ErrHelp
	case err != nil:
		return &usageError{msg: a.Platform + " " + a.Name + ": " + err.Error()}
	case fs.NArg() > 0:
		return &usageError{msg: fmt.Sprintf("%s %s takes no arguments (got %q)", a.Platform, a.Name, fs.Args())}
	}
	req := AppRequest{PublicURL: f.publicURL, Set: map[string]bool{}, Format: a.Formats[0], Getenv: env.Getenv}
	if req.PublicURL == "" {
		req.PublicURL = env.Getenv("SWITCHBOARD_PUBLIC_URL")
	}
	if req.PublicURL != "" {
		// The platforms call the addresses written from it: a bare host
		// or a relative path would make an app nothing reaches.
		u, err := url.Parse(req.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return &usageError{msg: fmt.Sprintf("%s %s: --public-url %q: want an https URL such as https://agents.example.com", a.Platform, a.Name, req.PublicURL)}
		}
		if u.Scheme != "https" {
			fmt.Fprintf(env.Stderr, "warning: %s is not https: the platform refuses plain-HTTP request URLs outside local tests\n", req.PublicURL)
		}
	}
	var chosen []string
	fs.Visit(func(fl *flag.Flag) {
		if on, ok := f.switches[fl.Name]; ok {
			req.Set[fl.Name] = *on
		}
		if on, ok := f.formats[fl.Name]; ok && *on {
			chosen = append(chosen, fl.Name)
		}
	})
	switch len(chosen) {
	case 0:
	case 1:
		req.Format = chosen[0]
	default:
		return &usageError{msg: fmt.Sprintf("%s %s: --%s: choose one format", a.Platform, a.Name, strings.Join(chosen, " and --"))}
	}
	out, err := a.Render(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", a.Platform, a.Name, err)
	}
	fmt.Fprint(env.Stdout, out.Manifest)
	for i, s := range out.Steps {
		fmt.Fprintf(env.Stderr, "%d. %s\n", i+1, s)
	}
	return nil
}
