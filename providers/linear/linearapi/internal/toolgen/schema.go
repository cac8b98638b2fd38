package toolgen

import (
	"encoding/json"
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// maxDepth bounds the expansion of recursive input types (filters nest
// themselves through and/or); deeper levels are plain objects.
const maxDepth = 2

// inputSchema is the JSON schema of an operation's variables: one
// property per variable, required when non-null without a default.
func inputSchema(schema *ast.Schema, op *ast.OperationDefinition, args map[string]string) (json.RawMessage, error) {
	props := map[string]any{}
	required := []string{}
	for _, v := range op.VariableDefinitions {
		p, err := typeSchema(schema, v.Type, 0)
		if err != nil {
			return nil, fmt.Errorf("variable $%s: %w", v.Variable, err)
		}
		if d := args[v.Variable]; d != "" {
			p["description"] = d
		}
		if v.DefaultValue != nil {
			if dv, err := v.DefaultValue.Value(nil); err == nil {
				p["default"] = dv
			}
		}
		props[v.Variable] = p
		if v.Type.NonNull && v.DefaultValue == nil {
			required = append(required, v.Variable)
		}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return json.Marshal(s)
}

// typeSchema maps a GraphQL input type to JSON schema. Nullability is
// expressed by "required" on the enclosing object, not by the type.
func typeSchema(schema *ast.Schema, t *ast.Type, depth int) (map[string]any, error) {
	if t.Elem != nil {
		items, err := typeSchema(schema, t.Elem, depth)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	}
	def := schema.Types[t.NamedType]
	if def == nil {
		return nil, fmt.Errorf("unknown type %s", t.NamedType)
	}
	switch def.Kind {
	case ast.Scalar:
		return scalarSchema(def), nil
	case ast.Enum:
		var values []string
		for _, v := range def.EnumValues {
			values = append(values, v.Name)
		}
		return withDescription(map[string]any{"type": "string", "enum": values}, def.Description), nil
	case ast.InputObject:
		s := withDescription(map[string]any{"type": "object"}, def.Description)
		if depth >= maxDepth {
			return s, nil
		}
		props := map[string]any{}
		var required []string
		for _, f := range def.Fields {
			p, err := typeSchema(schema, f.Type, depth+1)
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %w", def.Name, f.Name, err)
			}
			props[f.Name] = withDescription(p, f.Description)
			if f.Type.NonNull && f.DefaultValue == nil {
				required = append(required, f.Name)
			}
		}
		s["properties"], s["additionalProperties"] = props, false
		if len(required) > 0 {
			s["required"] = required
		}
		return s, nil
	default:
		return nil, fmt.Errorf("%s is not an input type", def.Name)
	}
}

func scalarSchema(def *ast.Definition) map[string]any {
	switch def.Name {
	case "String", "ID":
		return map[string]any{"type": "string"}
	case "Int":
		return map[string]any{"type": "integer"}
	case "Float":
		return map[string]any{"type": "number"}
	case "Boolean":
		return map[string]any{"type": "boolean"}
	case "DateTime":
		return map[string]any{"type": "string", "format": "date-time"}
	case "TimelessDate":
		return map[string]any{"type": "string", "format": "date"}
	case "JSONObject":
		return map[string]any{"type": "object"}
	case "JSON":
		return map[string]any{} // any JSON value
	default:
		return withDescription(map[string]any{"type": "string"}, def.Description)
	}
}

func withDescription(s map[string]any, d string) map[string]any {
	if d != "" {
		s["description"] = d
	}
	return s
}
