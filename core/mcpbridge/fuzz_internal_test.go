package mcpbridge

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// FuzzResultText feeds a tools/call result, as an MCP server sends it, to
// the parser the client uses and the rendering the model sees. The text is
// never empty, stays valid UTF-8 within the bound, and holds every text
// block whole when nothing was cut.
func FuzzResultText(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hello"}]}`,
		`{"content":[{"type":"text","text":"{\"a\":1}"}],"structuredContent":{"a":1}}`,
		`{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"audio","data":"!!","mimeType":""}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a.txt","mimeType":"text/plain","text":"body"}}]}`,
		`{"content":[{"type":"resource","resource":{"uri":"file:///a.bin","blob":"AAAA"}}]}`,
		`{"content":[{"type":"resource_link","uri":"https://x/y","name":"y"}],"isError":true}`,
		`{"content":[],"structuredContent":[1,2,{"b":null}]}`,
		`{"content":[{"type":"unknown"}]}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		raw := json.RawMessage(body)
		res, err := mcp.ParseCallToolResult(&raw)
		if err != nil || res == nil {
			return
		}
		out := resultText(res)
		if out == "" {
			t.Fatalf("%s renders as nothing", body)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("%s renders as invalid UTF-8: %q", body, out)
		}
		truncated := strings.Contains(out, "[output truncated: ")
		if shown := strings.SplitN(out, "\n[output truncated: ", 2)[0]; len(shown) > maxOutput {
			t.Fatalf("%d bytes rendered, the bound is %d", len(shown), maxOutput)
		}
		if truncated {
			return
		}
		for _, c := range res.Content {
			if text, ok := asText(c); ok && !strings.Contains(out, text) {
				t.Fatalf("text block %q missing from %q", text, out)
			}
		}
	})
}
