package command_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/core/command"
)

func TestHelp(t *testing.T) {
	tests := []struct {
		name string
		cmds []command.Command
		want string
	}{
		{"short usages align their summaries", []command.Command{
			{Name: "serve", Usage: "serve [flags]", Summary: "run the gateway"},
			{Name: "version", Usage: "version", Summary: "print the version"},
		}, "" +
			"  switchboard serve [flags]      run the gateway\n" +
			"  switchboard version            print the version\n"},
		{"a long usage puts its summary under it", []command.Command{
			{Name: "agent", Usage: "agent create|list|get|update [flags]", Summary: "manage agents"},
		}, "" +
			"  switchboard agent create|list|get|update [flags]\n" +
			"                                 manage agents\n"},
		{"a usage one short of the column", []command.Command{
			{Name: "x", Usage: "xxxxxxxxxxxxxxxxxx", Summary: "s"},
		}, "  switchboard xxxxxxxxxxxxxxxxxx s\n"},
		{"a usage reaching the column", []command.Command{
			{Name: "x", Usage: "xxxxxxxxxxxxxxxxxxx", Summary: "s"},
		}, "  switchboard xxxxxxxxxxxxxxxxxxx\n                                 s\n"},
		{"a command without usage is not listed", []command.Command{
			{Name: "help"},
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := command.Help("switchboard", tt.cmds); got != tt.want {
				t.Fatalf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestFind(t *testing.T) {
	cmds := []command.Command{{Name: "serve"}, {Name: "agent"}}
	tests := []struct {
		name string
		ok   bool
	}{
		{"serve", true},
		{"agent", true},
		{"sessions", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := command.Find(cmds, tt.name)
			if ok != tt.ok || (ok && c.Name != tt.name) {
				t.Fatalf("Find(%q) = %q, %v", tt.name, c.Name, ok)
			}
		})
	}
}
