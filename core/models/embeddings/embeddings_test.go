package embeddings_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core/models/embeddings"
	"github.com/switchboardhq/switchboard/core/settings"
	"github.com/switchboardhq/switchboard/fixtures/fakeembed"
)

func serve(t *testing.T, fake http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestEmbedBatches: texts go in batches, vectors come back in order.
func TestEmbedBatches(t *testing.T) {
	fake := fakeembed.New("embed-small")
	fake.RequireKey("sk-test")
	c := embeddings.New(embeddings.Config{Model: "embed-small", BaseURL: serve(t, fake) + "/", APIKey: "sk-test", BatchSize: 2})
	texts := []string{"we ship on tuesdays", "lunch is pizza", "the pager alert", "nothing here"}
	got, err := c.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(got), len(texts))
	}
	for i, text := range texts {
		want := fakeembed.Vector(text)
		if len(got[i]) != len(want) {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(got[i]), len(want))
		}
		for j := range want {
			if got[i][j] != want[j] {
				t.Fatalf("vector %d = %v, want %v (the vector of %q)", i, got[i], want, text)
			}
		}
	}
	if n := len(fake.Requests()); n != 2 {
		t.Errorf("%d requests for 4 texts in batches of 2", n)
	}
	if c.Model() != "openai/embed-small" {
		t.Errorf("Model() = %q", c.Model())
	}
}

// TestEmbedErrors: the server's message reaches the error, the key never.
func TestEmbedErrors(t *testing.T) {
	fake := fakeembed.New("embed-small")
	fake.RequireKey("sk-right")
	base := serve(t, fake)
	tests := []struct {
		name  string
		model string
		key   string
		fail  int
		want  string
	}{
		{"a wrong key", "embed-small", "sk-wrong", 0, "HTTP 401: Incorrect API key provided."},
		{"an unknown model", "nope", "sk-right", 0, "HTTP 404: The model `nope` does not exist"},
		{"a server error", "embed-small", "sk-right", http.StatusInternalServerError, "HTTP 500: The server had an error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.Fail(tt.fail)
			defer fake.Fail(0)
			_, err := embeddings.New(embeddings.Config{Model: tt.model, BaseURL: base, APIKey: tt.key}).Embed(t.Context(), []string{"x"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), tt.key) {
				t.Fatalf("the error shows the key: %v", err)
			}
		})
	}
}

// TestEmbedMalformedAnswers: an answer that does not match the request is
// an error, not a wrong vector.
func TestEmbedMalformedAnswers(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"too few vectors", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1]}],"model":"m"}`, "1 vectors for 2 texts"},
		{"an index twice", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1]},{"object":"embedding","index":0,"embedding":[1]}],"model":"m"}`, "index 0"},
		{"mixed dimensions", `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1]},{"object":"embedding","index":1,"embedding":[1,2]}],"model":"m"}`, "mixed"},
		{"not JSON", `<html>`, "decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tt.body)) }))
			defer srv.Close()
			_, err := embeddings.New(embeddings.Config{Model: "m", BaseURL: srv.URL}).Embed(t.Context(), []string{"a", "b"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	env := map[string]string{"OPENAI_BASE_URL": "http://ollama:11434/v1", "OPENAI_API_KEY": "sk-openai"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name    string
		v       settings.Values
		want    string // the model, or "" for no client
		wantErr string
	}{
		{"unset: no client", settings.Values{}, "", ""},
		{"openai/<model>", settings.Values{embeddings.EnvModel: "openai/nomic-embed-text"}, "openai/nomic-embed-text", ""},
		{"no vendor", settings.Values{embeddings.EnvModel: "nomic-embed-text"}, "", "SWITCHBOARD_EMBEDDING_MODEL=\"nomic-embed-text\": want openai/<model>"},
		{"another vendor", settings.Values{embeddings.EnvModel: "anthropic/x"}, "", "want openai/<model>"},
		{"a bad base URL", settings.Values{embeddings.EnvModel: "openai/m", embeddings.EnvBaseURL: "ftp://x"}, "", "SWITCHBOARD_EMBEDDING_BASE_URL=\"ftp://x\""},
		{"a bad base URL without a model", settings.Values{embeddings.EnvBaseURL: "localhost:11434"}, "", "SWITCHBOARD_EMBEDDING_BASE_URL=\"localhost:11434\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := embeddings.Load(tt.v, getenv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (c == nil) != (tt.want == "") || (c != nil && c.Model() != tt.want) {
				t.Fatalf("client = %v, want model %q", c, tt.want)
			}
		})
	}
}

// TestLoadDefaultsToOpenAIVariables: a server that serves the chat model
// (OPENAI_BASE_URL, OPENAI_API_KEY) serves the embeddings without more
// settings; the embedding ones win when set.
func TestLoadDefaultsToOpenAIVariables(t *testing.T) {
	fake := fakeembed.New("m")
	fake.RequireKey("sk-openai")
	base := serve(t, fake)
	env := map[string]string{"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-openai"}
	c, err := embeddings.Load(settings.Values{embeddings.EnvModel: "openai/m"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	fake.RequireKey("sk-embed")
	env["OPENAI_BASE_URL"] = "http://127.0.0.1:1/v1"
	c, err = embeddings.Load(settings.Values{embeddings.EnvModel: "openai/m", embeddings.EnvBaseURL: base, embeddings.EnvAPIKey: "sk-embed"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
}

// TestLoadKeepsOpenAIKeyAtOpenAI: an embedding server of its own (a local
// Ollama) never gets the chat model's OpenAI key; the key goes only where
// OpenAI's variables point.
func TestLoadKeepsOpenAIKeyAtOpenAI(t *testing.T) {
	fake := fakeembed.New("m")
	var mu sync.Mutex
	var auth []string
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		fake.ServeHTTP(w, r)
	}))
	env := map[string]string{"OPENAI_API_KEY": "sk-openai"}
	c, err := embeddings.Load(settings.Values{embeddings.EnvModel: "openai/m", embeddings.EnvBaseURL: base}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range auth {
		if strings.Contains(a, "sk-openai") {
			t.Fatalf("the embedding server of its own got OpenAI's key: Authorization %q", a)
		}
	}
	if len(auth) == 0 {
		t.Fatal("no request reached the embedding server")
	}
}
