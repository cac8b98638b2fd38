package toolgen

import (
	"strings"
	"testing"
)

const sdl = `
type Query { thing(id: String!, kind: Kind, first: Int = 5): Thing, other: Thing }
type Mutation { thingSet(input: ThingInput!): Thing }
type Thing { id: ID!, name: String }
enum Kind { big small }
"""A thing to set."""
input ThingInput { id: String!, size: Float, tags: [String!], when: DateTime, meta: JSONObject, nested: ThingInput }
scalar DateTime
scalar JSONObject
`

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"GetIssue": "get_issue", "ListWorkflowStates": "list_workflow_states", "getURLFor": "get_url_for",
		"Viewer": "viewer", "Create2FA": "create2_fa",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGenerate(t *testing.T) {
	schema, err := LoadSchema("test.graphql", sdl)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, ops string
		tools     []string
		schemas   []string // input schemas, in tool order
		err       string
	}{
		{name: "only marked operations are tools", ops: `
# Not a tool.
query Other { other { id } }

# @tool Get a thing.
# @arg id Its id.
query GetThing($id: String!, $kind: Kind, $first: Int = 5) { thing(id: $id, kind: $kind, first: $first) { id ...F } }

fragment F on Thing { name }
`, tools: []string{"get_thing"}, schemas: []string{
			`{"additionalProperties":false,"properties":{"first":{"default":5,"type":"integer"},"id":{"description":"Its id.","type":"string"},"kind":{"enum":["big","small"],"type":"string"}},"required":["id"],"type":"object"}`}},
		{name: "input objects, lists and custom scalars", ops: `
# @tool Set a thing.
mutation SetThing($input: ThingInput!) { thingSet(input: $input) { id } }
`, tools: []string{"set_thing"}, schemas: []string{
			`{"additionalProperties":false,"properties":{"input":{"additionalProperties":false,"description":"A thing to set.","properties":{"id":{"type":"string"},"meta":{"type":"object"},"nested":{"additionalProperties":false,"description":"A thing to set.","properties":{"id":{"type":"string"},"meta":{"type":"object"},"nested":{"description":"A thing to set.","type":"object"},"size":{"type":"number"},"tags":{"items":{"type":"string"},"type":"array"},"when":{"format":"date-time","type":"string"}},"required":["id"],"type":"object"},"size":{"type":"number"},"tags":{"items":{"type":"string"},"type":"array"},"when":{"format":"date-time","type":"string"}},"required":["id"],"type":"object"}},"required":["input"],"type":"object"}`}},
		{name: "invalid against the schema", ops: "# @tool x\nquery Q { thing { nope } }", err: "nope"},
		{name: "@arg names no variable", ops: "# @tool x\n# @arg idd typo\nquery Q($id: String!) { thing(id: $id) { id } }", err: "@arg idd"},
		{name: "no description", ops: "# @tool\nquery Q { other { id } }", err: "needs a description"},
		{name: "two operations, one name", ops: "# @tool a\nquery getX { other { id } }\n# @tool b\nquery GetX { other { id } }", err: "both make the tool get_x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tools, err := Generate(schema, "ops.graphql", tt.ops)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tools) != len(tt.tools) {
				t.Fatalf("tools %+v, want %v", tools, tt.tools)
			}
			for i, tl := range tools {
				if tl.Name != tt.tools[i] || string(tl.InputSchema) != tt.schemas[i] {
					t.Errorf("tool %s schema\n%s\nwant %s\n%s", tl.Name, tl.InputSchema, tt.tools[i], tt.schemas[i])
				}
				if strings.Contains(tl.Query, "#") {
					t.Errorf("query keeps comments: %s", tl.Query)
				}
			}
			if tt.name == "only marked operations are tools" && !strings.Contains(tools[0].Query, "fragment F on Thing") {
				t.Errorf("the fragment is not sent with the query: %s", tools[0].Query)
			}
		})
	}
}
