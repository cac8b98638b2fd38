// Package linearapi is switchboard's client for Linear's GraphQL API: the
// typed operations genqlient generates from operations.graphql and Linear's
// schema, a graphql.Client that keeps Linear's error details (rate limits,
// user errors), the activity content the Agent API takes, and an MCP
// server whose tools are the operations marked "# @tool".
//
// Regenerate after changing operations.graphql (Linear's published schema
// is downloaded into the ignored providers/linear/internal/schema/; see
// docs/linear.md#regenerating-the-client):
//
//	go generate ./providers/linear/linearapi
package linearapi

//go:generate go run ./internal/generate
