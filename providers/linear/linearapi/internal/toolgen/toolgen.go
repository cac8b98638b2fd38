// Package toolgen turns the operations marked "# @tool" in linearapi's
// operations file into MCP tool definitions: a name, a description, the
// operation's query text and a JSON schema of its variables derived from
// Linear's GraphQL schema. go generate writes them into tools_gen.go, so
// the runtime needs neither the schema nor a parser.
package toolgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
)

// Tool is one generated MCP tool.
type Tool struct {
	Name        string          // snake_case of the operation's name
	Operation   string          // the GraphQL operation's name
	Description string          // from the "# @tool" line
	Query       string          // the operation's text, fragments included
	InputSchema json.RawMessage // JSON schema of the variables
}

// LoadSchema parses Linear's schema (SDL).
func LoadSchema(name, sdl string) (*ast.Schema, error) {
	s, err := gqlparser.LoadSchema(&ast.Source{Name: name, Input: sdl})
	if err != nil {
		return nil, fmt.Errorf("load schema %s: %w", name, err)
	}
	return s, nil
}

// Validate parses and validates an operations document against the
// schema, naming every problem.
func Validate(schema *ast.Schema, name, ops string) (*ast.QueryDocument, error) {
	doc, errs := gqlparser.LoadQuery(schema, ops)
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", name, errs)
	}
	return doc, nil
}

// Generate returns the tools of the operations document, sorted by name.
func Generate(schema *ast.Schema, name, ops string) ([]Tool, error) {
	doc, err := Validate(schema, name, ops)
	if err != nil {
		return nil, err
	}
	var tools []Tool
	seen := map[string]string{}
	for _, op := range doc.Operations {
		desc, args, ok := toolComment(op.Comment)
		if !ok {
			continue
		}
		if op.Name == "" {
			return nil, fmt.Errorf("%s:%d: a tool operation needs a name", name, op.Position.Line)
		}
		if desc == "" {
			return nil, fmt.Errorf("%s: %s: @tool needs a description", name, op.Name)
		}
		if op.Operation == ast.Subscription {
			return nil, fmt.Errorf("%s: %s: a subscription cannot be a tool", name, op.Name)
		}
		t := Tool{Name: SnakeCase(op.Name), Operation: op.Name, Description: desc}
		if other, dup := seen[t.Name]; dup {
			return nil, fmt.Errorf("%s: %s and %s both make the tool %s", name, other, op.Name, t.Name)
		}
		seen[t.Name] = op.Name
		for arg := range args {
			if op.VariableDefinitions.ForName(arg) == nil {
				return nil, fmt.Errorf("%s: %s: @arg %s names no variable", name, op.Name, arg)
			}
		}
		if t.InputSchema, err = inputSchema(schema, op, args); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, op.Name, err)
		}
		t.Query = queryText(doc, op)
		tools = append(tools, t)
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	return tools, nil
}

// toolComment reads "@tool <description>" and "@arg <name> <description>"
// lines from an operation's leading comment.
func toolComment(c *ast.CommentGroup) (desc string, args map[string]string, ok bool) {
	if c == nil {
		return "", nil, false
	}
	args = map[string]string{}
	for _, line := range c.List {
		text := strings.TrimSpace(line.Text())
		switch {
		case text == "@tool" || strings.HasPrefix(text, "@tool "):
			desc, ok = strings.TrimSpace(strings.TrimPrefix(text, "@tool")), true
		case strings.HasPrefix(text, "@arg "):
			name, d, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(text, "@arg ")), " ")
			args[name] = strings.TrimSpace(d)
		}
	}
	return desc, args, ok
}

// queryText is the operation alone, with the fragments it spreads, as
// genqlient would send it.
func queryText(doc *ast.QueryDocument, op *ast.OperationDefinition) string {
	one := &ast.QueryDocument{Operations: ast.OperationList{stripComments(op)}}
	used := map[string]bool{}
	var walk func(ast.SelectionSet)
	walk = func(set ast.SelectionSet) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				walk(s.SelectionSet)
			case *ast.InlineFragment:
				walk(s.SelectionSet)
			case *ast.FragmentSpread:
				if !used[s.Name] {
					used[s.Name] = true
					if f := doc.Fragments.ForName(s.Name); f != nil {
						one.Fragments = append(one.Fragments, f)
						walk(f.SelectionSet)
					}
				}
			}
		}
	}
	walk(op.SelectionSet)
	var b bytes.Buffer
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatQueryDocument(one)
	return strings.TrimSpace(b.String())
}

func stripComments(op *ast.OperationDefinition) *ast.OperationDefinition {
	c := *op
	c.Comment = nil
	return &c
}

// SnakeCase names a tool after its operation: GetIssue → get_issue,
// ListWorkflowStates → list_workflow_states.
func SnakeCase(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		if unicode.IsUpper(c) {
			if i > 0 && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]) || (i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1]))) {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}
