package mcpbridge

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// maxOutput bounds what one MCP call puts into the model's context.
const maxOutput = 100_000

// resultText renders an MCP tool result for the model: text as is, binary
// content as a note of its type and size (the model cannot use the bytes),
// and structured content as JSON unless a text block already carries it.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	var texts []string
	for _, c := range res.Content {
		s := contentText(c)
		if s == "" {
			continue
		}
		parts = append(parts, s)
		if t, ok := asText(c); ok {
			texts = append(texts, t)
		}
	}
	if s := structuredText(res, texts); s != "" {
		parts = append(parts, s)
	}
	out := strings.Join(parts, "\n")
	if len(out) > maxOutput {
		cut := maxOutput
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", cut, len(out))
	}
	if out == "" {
		return "(no output)"
	}
	return out
}

func asText(c mcp.Content) (string, bool) {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text, true
	case *mcp.TextContent:
		return v.Text, true
	}
	return "", false
}

func contentText(c mcp.Content) string {
	switch v := c.(type) {
	case mcp.TextContent:
		return v.Text
	case *mcp.TextContent:
		return v.Text
	case mcp.ImageContent:
		return binaryNote(v.MIMEType, v.Data)
	case *mcp.ImageContent:
		return binaryNote(v.MIMEType, v.Data)
	case mcp.AudioContent:
		return binaryNote(v.MIMEType, v.Data)
	case *mcp.AudioContent:
		return binaryNote(v.MIMEType, v.Data)
	case mcp.ResourceLink:
		return linkNote(v)
	case *mcp.ResourceLink:
		return linkNote(*v)
	case mcp.EmbeddedResource:
		return resourceText(v.Resource)
	case *mcp.EmbeddedResource:
		return resourceText(v.Resource)
	}
	return fmt.Sprintf("[unsupported content %T]", c)
}

// binaryNote is "[image/png, 1234 bytes]".
func binaryNote(mime, data string) string {
	if mime == "" {
		mime = "application/octet-stream"
	}
	n := len(data)
	if b, err := base64.StdEncoding.DecodeString(data); err == nil {
		n = len(b)
	} else {
		n = base64.StdEncoding.DecodedLen(n)
	}
	return fmt.Sprintf("[%s, %d bytes]", mime, n)
}

func linkNote(l mcp.ResourceLink) string {
	s := "[resource link " + l.URI
	if l.Name != "" {
		s += " " + l.Name
	}
	if l.MIMEType != "" {
		s += " (" + l.MIMEType + ")"
	}
	return s + "]"
}

// resourceText keeps an embedded text resource's text (the model can read
// it) under a line naming it, and summarises a blob.
func resourceText(r mcp.ResourceContents) string {
	switch v := r.(type) {
	case mcp.TextResourceContents:
		return resourceHead(v.URI, v.MIMEType) + "\n" + v.Text
	case *mcp.TextResourceContents:
		return resourceHead(v.URI, v.MIMEType) + "\n" + v.Text
	case mcp.BlobResourceContents:
		return "[resource " + v.URI + ", " + strings.Trim(binaryNote(v.MIMEType, v.Blob), "[]") + "]"
	case *mcp.BlobResourceContents:
		return "[resource " + v.URI + ", " + strings.Trim(binaryNote(v.MIMEType, v.Blob), "[]") + "]"
	}
	return "[resource]"
}

func resourceHead(uri, mime string) string {
	if mime == "" {
		return "[resource " + uri + "]"
	}
	return "[resource " + uri + " (" + mime + ")]"
}

// structuredText is the result's structured content as JSON, or "" when
// there is none or a text block already holds the same value (servers are
// asked to send both, and the model needs it once).
func structuredText(res *mcp.CallToolResult, texts []string) string {
	raw := res.RawStructuredContent
	if len(raw) == 0 {
		if res.StructuredContent == nil {
			return ""
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return ""
		}
		raw = b
	}
	var want any
	if err := json.Unmarshal(raw, &want); err != nil || want == nil {
		return ""
	}
	for _, t := range texts {
		var got any
		if json.Unmarshal([]byte(t), &got) == nil && reflect.DeepEqual(got, want) {
			return ""
		}
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return ""
	}
	return compact.String()
}
