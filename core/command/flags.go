package command

import (
	"flag"
	"fmt"
	"strings"
)

// IsHelp reports whether arg asks for help, as -h and --help do.
func IsHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// FlagUsage lists the flags of fs for a usage text, each written with
// two dashes as the documentation writes them: "  --name VALUE" then
// its description indented on the next line, with the default when it
// is not the zero value.
func FlagUsage(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		b.WriteString("  --" + f.Name)
		if v := valueName(f); v != "" {
			b.WriteString(" " + v)
		}
		_, usage := flag.UnquoteUsage(f)
		b.WriteString("\n      " + strings.ReplaceAll(usage, "\n", "\n      "))
		if !zeroDefault(f) {
			fmt.Fprintf(&b, " (default %q)", f.DefValue)
		}
		b.WriteString("\n")
	})
	return b.String()
}

// Flags are fs's flags as a Command lists them.
func Flags(fs *flag.FlagSet) []Flag {
	var out []Flag
	fs.VisitAll(func(f *flag.Flag) { out = append(out, Flag{Name: f.Name, Value: valueName(f)}) })
	return out
}

// valueName is what a flag's value is, from its usage's `NAME` or its
// type; "" for a switch.
func valueName(f *flag.Flag) string {
	name, _ := flag.UnquoteUsage(f)
	return strings.ToUpper(name)
}

func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "[]", "map[]":
		return true
	}
	return false
}
