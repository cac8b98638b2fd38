package usage_test

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/usage"
)

const anthropicJSON = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hi"}],
"stop_reason":"end_turn","usage":{"input_tokens":812,"cache_creation_input_tokens":100,"cache_read_input_tokens":2048,"output_tokens":57}}`

const anthropicStream = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","usage":{"input_tokens":812,"cache_creation_input_tokens":100,"cache_read_input_tokens":2048,"output_tokens":1}}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}` + "\n\n" +
	"event: message_delta\n" +
	`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":57}}` + "\n\n" +
	"event: message_stop\n" + `data: {"type":"message_stop"}` + "\n\n"

const chatJSON = `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[],
"usage":{"prompt_tokens":3000,"completion_tokens":40,"total_tokens":3040,"prompt_tokens_details":{"cached_tokens":1024}}}`

const chatStream = `data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"delta":{"content":"hi"}}],"usage":null}` + "\r\n\r\n" +
	`data: {"id":"c","object":"chat.completion.chunk","model":"gpt-4o","choices":[],"usage":{"prompt_tokens":300,"completion_tokens":12,"total_tokens":312}}` + "\n\n" +
	"data: [DONE]\n\n"

const responsesStream = "event: response.created\n" + `data: {"type":"response.created","response":{"model":"gpt-5","usage":null}}` + "\n\n" +
	"event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","delta":"hi"}` + "\n\n" +
	"event: response.completed\n" + `data: {"type":"response.completed","response":{"model":"gpt-5","usage":{"input_tokens":500,"input_tokens_details":{"cached_tokens":100},"output_tokens":70,"output_tokens_details":{"reasoning_tokens":30},"total_tokens":570}}}` + "\n\n"

const geminiStream = `data: {"candidates":[{"content":{"parts":[{"text":"h"}]}}],"usageMetadata":{"promptTokenCount":400,"candidatesTokenCount":2,"totalTokenCount":402},"modelVersion":"gemini-2.5-pro"}` + "\n\n" +
	`data: {"candidates":[{"content":{"parts":[{"text":"i"}]}}],"usageMetadata":{"promptTokenCount":400,"candidatesTokenCount":9,"thoughtsTokenCount":20,"cachedContentTokenCount":100,"totalTokenCount":429},"modelVersion":"gemini-2.5-pro"}` + "\n\n"

func TestMeter(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		model                   string
		want                    core.Usage
	}{
		{"anthropic json", "application/json", anthropicJSON, "claude-sonnet-4-5", core.Usage{InputTokens: 812, OutputTokens: 57, CacheReadInputTokens: 2048, CacheCreationInputTokens: 100}},
		{"anthropic stream", "text/event-stream; charset=utf-8", anthropicStream, "claude-sonnet-4-5", core.Usage{InputTokens: 812, OutputTokens: 57, CacheReadInputTokens: 2048, CacheCreationInputTokens: 100}},
		{"chat completions json", "application/json", chatJSON, "gpt-4o-2024-08-06", core.Usage{InputTokens: 1976, OutputTokens: 40, CacheReadInputTokens: 1024}},
		{"chat completions stream", "text/event-stream", chatStream, "gpt-4o", core.Usage{InputTokens: 300, OutputTokens: 12}},
		{"responses stream", "text/event-stream", responsesStream, "gpt-5", core.Usage{InputTokens: 400, OutputTokens: 70, CacheReadInputTokens: 100}},
		{"gemini stream", "text/event-stream", geminiStream, "gemini-2.5-pro", core.Usage{InputTokens: 300, OutputTokens: 29, CacheReadInputTokens: 100}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var reports []core.Usage
			var model string
			// One byte a read: lines and JSON split anywhere.
			body := io.NopCloser(iotest.OneByteReader(strings.NewReader(tc.body)))
			m := usage.Meter(body, tc.contentType, func(mod string, u core.Usage) { model = mod; reports = append(reports, u) })
			got, err := io.ReadAll(m)
			if err != nil || string(got) != tc.body {
				t.Fatalf("the body changed on its way: %v", err)
			}
			_ = m.Close()
			if len(reports) != 1 || reports[0] != tc.want || model != tc.model {
				t.Fatalf("reported %+v for %q, want %+v for %q", reports, model, tc.want, tc.model)
			}
		})
	}
}

// TestMeterWithoutUsage: a body with no usage (an error, another API)
// reports nothing; one cut short reports what came before the cut.
func TestMeterWithoutUsage(t *testing.T) {
	for _, body := range []string{`{"type":"error","error":{"type":"overloaded_error"}}`, "not json", ""} {
		called := false
		m := usage.Meter(io.NopCloser(strings.NewReader(body)), "application/json", func(string, core.Usage) { called = true })
		_, _ = io.ReadAll(m)
		_ = m.Close()
		if called {
			t.Fatalf("reported a usage for %q", body)
		}
	}
	var got core.Usage
	n := 0
	cut := anthropicStream[:strings.Index(anthropicStream, "event: message_delta")]
	m := usage.Meter(io.NopCloser(strings.NewReader(cut+anthropicStream[len(cut):len(cut)+20])), "text/event-stream", func(_ string, u core.Usage) { got = u; n++ })
	buf := make([]byte, len(cut))
	_, _ = io.ReadFull(m, buf)
	_ = m.Close()
	_ = m.Close()
	if n != 1 || got.InputTokens != 812 || got.OutputTokens != 1 {
		t.Fatalf("a stream closed early reported %d times: %+v", n, got)
	}
}
