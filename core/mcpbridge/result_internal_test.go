package mcpbridge

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestResultText(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString(make([]byte, 10))
	for _, c := range []struct {
		name string
		res  *mcp.CallToolResult
		want string
	}{
		{"texts joined", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a"), mcp.NewTextContent("b")}}, "a\nb"},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(b64, "image/png")}}, "[image/png, 10 bytes]"},
		{"audio", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(b64, "audio/wav")}}, "[audio/wav, 10 bytes]"},
		{"text resource", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "body"})}}, "[resource file:///a.txt (text/plain)]\nbody"},
		{"blob resource", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "file:///a.bin", MIMEType: "application/zip", Blob: b64})}}, "[resource file:///a.bin, application/zip, 10 bytes]"},
		{"resource link", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewResourceLink("https://x/y", "y", "", "text/html")}}, "[resource link https://x/y y (text/html)]"},
		{"structured only", &mcp.CallToolResult{RawStructuredContent: json.RawMessage(`{"b": 1, "a": [2]}`)}, `{"b":1,"a":[2]}`},
		{"structured repeated in text", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(`{"a": 1}`)}, StructuredContent: map[string]any{"a": 1}}, `{"a": 1}`},
		{"structured beside other text", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("sum")}, StructuredContent: map[string]any{"a": 1}}, "sum\n{\"a\":1}"},
		{"nothing", &mcp.CallToolResult{}, "(no output)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := resultText(c.res); got != c.want {
				t.Errorf("resultText = %q, want %q", got, c.want)
			}
		})
	}
}

func TestResultTextIsBounded(t *testing.T) {
	big := strings.Repeat("é", maxOutput) // two bytes each: the cut lands mid-rune
	got := resultText(&mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(big)}})
	if len(got) > maxOutput+100 || !strings.Contains(got, "[output truncated") {
		t.Fatalf("len %d, tail %q", len(got), got[len(got)-60:])
	}
	if !utf8.ValidString(got) {
		t.Error("the cut split a rune")
	}
}
