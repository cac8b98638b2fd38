// Package usage reads the token usage out of model API responses as they
// pass through the gateway (the egress proxy relays an ACP agent's model
// calls): Anthropic Messages, OpenAI Chat Completions and Responses, and
// Gemini, whole JSON bodies and server-sent event streams alike, so that
// cost and budgets cover agents whose model calls the gateway does not
// make itself.
package usage

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// maxJSON bounds the JSON body read whole for its usage; a larger one is
// relayed unmetered.
const maxJSON = 16 << 20

// Meter wraps a response body: what is read through it is parsed on the
// way, and at its end (EOF, or Close before it) report is called once
// with the model and usage found, when any was.
func Meter(body io.ReadCloser, contentType string, report func(model string, u core.Usage)) io.ReadCloser {
	mt, _, _ := mime.ParseMediaType(contentType)
	return &meter{body: body, stream: mt == "text/event-stream", report: report}
}

type meter struct {
	body   io.ReadCloser
	stream bool
	report func(string, core.Usage)

	mu    sync.Mutex
	buf   bytes.Buffer // the JSON body, or the stream's unfinished line
	over  bool         // the JSON body outgrew maxJSON
	model string
	usage core.Usage
	found bool
	done  bool
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.body.Read(p)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.take(p[:n])
	if err != nil {
		m.finish()
	}
	return n, err
}

func (m *meter) Close() error {
	m.mu.Lock()
	m.finish()
	m.mu.Unlock()
	return m.body.Close()
}

func (m *meter) take(b []byte) {
	if m.done {
		return
	}
	if !m.stream {
		if !m.over && m.buf.Len()+len(b) <= maxJSON {
			m.buf.Write(b)
		} else {
			m.over = true
			m.buf.Reset()
		}
		return
	}
	m.buf.Write(b)
	for {
		line, err := m.buf.ReadBytes('\n')
		if err != nil {
			// An unfinished line waits for the rest.
			rest := append([]byte(nil), line...)
			m.buf.Reset()
			m.buf.Write(rest)
			return
		}
		m.line(line)
	}
}

// line reads one line of an event stream: its data is a JSON event.
func (m *meter) line(line []byte) {
	data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
	if ok {
		m.event(bytes.TrimSpace(data))
	}
}

func (m *meter) finish() {
	if m.done {
		return
	}
	m.done = true
	if m.stream {
		m.line(m.buf.Bytes())
	} else if !m.over {
		m.event(m.buf.Bytes())
	}
	m.buf.Reset()
	if m.found && m.report != nil {
		m.report(m.model, m.usage)
	}
}

// event folds one JSON object's usage in. Streams repeat or grow their
// counts (Anthropic's message_start, then message_delta with the output
// alone; Gemini's every chunk), so a later count that is not zero
// replaces the earlier one.
func (m *meter) event(raw []byte) {
	if len(raw) == 0 || raw[0] != '{' {
		return
	}
	var w wire
	if json.Unmarshal(raw, &w) != nil {
		return
	}
	model, u, ok := w.read()
	if !ok {
		return
	}
	if model != "" {
		m.model = model
	}
	m.found = true
	m.usage = core.Usage{
		InputTokens:              later(m.usage.InputTokens, u.InputTokens),
		OutputTokens:             later(m.usage.OutputTokens, u.OutputTokens),
		CacheReadInputTokens:     later(m.usage.CacheReadInputTokens, u.CacheReadInputTokens),
		CacheCreationInputTokens: later(m.usage.CacheCreationInputTokens, u.CacheCreationInputTokens),
	}
}

func later(was, now int64) int64 {
	if now != 0 {
		return now
	}
	return was
}

// wire is what the formats put where: the usage at the top (Anthropic's
// response and message_delta, Chat Completions), in message (Anthropic's
// message_start), in response (Responses' response.completed), or as
// usageMetadata (Gemini).
type wire struct {
	Model        string  `json:"model"`
	ModelVersion string  `json:"modelVersion"`
	Usage        *fields `json:"usage"`
	Message      *struct {
		Model string  `json:"model"`
		Usage *fields `json:"usage"`
	} `json:"message"`
	Response *struct {
		Model string  `json:"model"`
		Usage *fields `json:"usage"`
	} `json:"response"`
	UsageMetadata *struct {
		Prompt     int64 `json:"promptTokenCount"`
		Candidates int64 `json:"candidatesTokenCount"`
		Cached     int64 `json:"cachedContentTokenCount"`
		Thoughts   int64 `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
}

type fields struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheRead        int64 `json:"cache_read_input_tokens"`
	CacheCreation    int64 `json:"cache_creation_input_tokens"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// OpenAI counts the cached prompt tokens inside the prompt's.
	PromptDetails *struct {
		Cached int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputDetails *struct {
		Cached int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

func (w wire) read() (string, core.Usage, bool) {
	switch {
	case w.UsageMetadata != nil:
		g := w.UsageMetadata
		return w.ModelVersion, core.Usage{InputTokens: g.Prompt - g.Cached, CacheReadInputTokens: g.Cached, OutputTokens: g.Candidates + g.Thoughts}, true
	case w.Message != nil && w.Message.Usage != nil:
		return w.Message.Model, w.Message.Usage.normal(), true
	case w.Response != nil && w.Response.Usage != nil:
		return w.Response.Model, w.Response.Usage.normal(), true
	case w.Usage != nil:
		return w.Model, w.Usage.normal(), true
	}
	return "", core.Usage{}, false
}

// normal is the usage with input tokens apart from cached ones, as
// core.Usage counts them.
func (f *fields) normal() core.Usage {
	switch {
	case f.PromptTokens > 0 || f.CompletionTokens > 0: // Chat Completions
		cached := int64(0)
		if f.PromptDetails != nil {
			cached = f.PromptDetails.Cached
		}
		return core.Usage{InputTokens: f.PromptTokens - cached, CacheReadInputTokens: cached, OutputTokens: f.CompletionTokens}
	case f.InputDetails != nil: // Responses
		return core.Usage{InputTokens: f.InputTokens - f.InputDetails.Cached, CacheReadInputTokens: f.InputDetails.Cached, OutputTokens: f.OutputTokens}
	}
	return core.Usage{InputTokens: f.InputTokens, OutputTokens: f.OutputTokens, CacheReadInputTokens: f.CacheRead, CacheCreationInputTokens: f.CacheCreation}
}
