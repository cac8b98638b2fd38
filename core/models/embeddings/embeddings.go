// Package embeddings is a client of the OpenAI-compatible embeddings API
// (POST {base}/embeddings), which OpenAI, Ollama, vLLM and most gateways
// serve: it turns texts into vectors for search by meaning. It declares
// the embedding model's settings and builds the client from them.
package embeddings

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/core/web"
)

// Setting names.
const (
	EnvModel   = "SWITCHBOARD_EMBEDDING_MODEL"
	EnvBaseURL = "SWITCHBOARD_EMBEDDING_BASE_URL"
	EnvAPIKey  = "SWITCHBOARD_EMBEDDING_API_KEY"
)

// DefaultBaseURL is OpenAI's API, used when neither the embedding base URL
// nor OPENAI_BASE_URL is set.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options are the embedding model's settings.
func Options() []settings.Option {
	return []settings.Option{
		{Env: EnvModel, Flag: "embedding-model", Usage: "model that embeds memory files so the memory tool's search ranks by meaning: openai/<model> of an OpenAI-compatible /embeddings API (Ollama, vLLM); empty: search by words"},
		{Env: EnvBaseURL, Flag: "embedding-base-url", Usage: "embeddings API base, e.g. http://127.0.0.1:11434/v1 for Ollama (default: OPENAI_BASE_URL, else " + DefaultBaseURL + ")"},
		{Env: EnvAPIKey, Flag: "embedding-api-key", Usage: "embeddings API key (default: OPENAI_API_KEY; none for a keyless server)"},
	}
}

// Config configures a Client.
type Config struct {
	Model   string // as the server names it, without the openai/ prefix
	BaseURL string // the API base, ending in /v1 for OpenAI and Ollama
	APIKey  string // sent as a bearer token when set
	// HTTPClient sends the requests; nil is a web.APIClient with a
	// one-minute timeout.
	HTTPClient *http.Client
	// BatchSize is how many texts one request carries; 0 is 64.
	BatchSize int
}

// Client embeds texts with one model.
type Client struct {
	cfg Config
}

// New returns a client of cfg.
func New(cfg Config) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = web.APIClient(time.Minute)
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Client{cfg: cfg}
}

// Load builds the client the settings describe: nil without an embedding
// model. The base URL and key default to OpenAI's variables, so a server
// that already serves the chat model serves the embeddings too.
func Load(v settings.Values, getenv func(string) string) (*Client, error) {
	if v[EnvBaseURL] != "" {
		if _, err := v.URL(EnvBaseURL); err != nil {
			return nil, err
		}
	}
	raw := v[EnvModel]
	if raw == "" {
		return nil, nil
	}
	vendor, name, ok := strings.Cut(raw, "/")
	if !ok || vendor != "openai" || name == "" {
		return nil, fmt.Errorf("%s=%q: want openai/<model>, a model of an OpenAI-compatible embeddings API (Ollama and vLLM included)", EnvModel, raw)
	}
	cfg := Config{Model: name, BaseURL: DefaultBaseURL, APIKey: v[EnvAPIKey]}
	switch {
	case v[EnvBaseURL] != "":
		cfg.BaseURL = v[EnvBaseURL]
	case getenv("OPENAI_BASE_URL") != "":
		cfg.BaseURL = getenv("OPENAI_BASE_URL")
	}
	// OpenAI's key goes only where OpenAI's variables point: an embedding
	// server of its own (a local Ollama, say) gets its own key or none.
	if cfg.APIKey == "" && v[EnvBaseURL] == "" {
		cfg.APIKey = getenv("OPENAI_API_KEY")
	}
	return New(cfg), nil
}

// Model names the model as the settings do (openai/<model>): what an
// embedding records, so a change of model is seen.
func (c *Client) Model() string { return "openai/" + c.cfg.Model }

// request is the body of POST /embeddings.
type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// response is the body of its answer.
type response struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// Embed returns a vector of each text, in order, sending them in batches.
// Every vector has the same length.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.cfg.BatchSize {
		batch := texts[start:min(len(texts), start+c.cfg.BatchSize)]
		vs, err := c.embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vs[0]) != len(out[0]) {
			return nil, fmt.Errorf("embeddings: model %s answered %d dimensions, then %d", c.cfg.Model, len(out[0]), len(vs[0]))
		}
		out = append(out, vs...)
	}
	return out, nil
}

// maxErrorBody bounds what of an error response is read for its message.
const maxErrorBody = 64 << 10

func (c *Client) embed(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.cfg.Model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("embeddings: model %s: HTTP %d: %s", c.cfg.Model, resp.StatusCode, errorMessage(resp.Body))
	}
	var r response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("embeddings: model %s: decode the answer: %w", c.cfg.Model, err)
	}
	if len(r.Data) != len(texts) {
		return nil, fmt.Errorf("embeddings: model %s answered %d vectors for %d texts", c.cfg.Model, len(r.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("embeddings: model %s answered index %d twice or out of range", c.cfg.Model, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	for _, v := range out {
		if len(v) == 0 || len(v) != len(out[0]) {
			return nil, fmt.Errorf("embeddings: model %s answered vectors of mixed or no dimensions", c.cfg.Model)
		}
	}
	return out, nil
}

// errorMessage is the message of an OpenAI-style error body
// ({"error":{"message":…}}), else the body's start.
func errorMessage(body io.Reader) string {
	raw, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
