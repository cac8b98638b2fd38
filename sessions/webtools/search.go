package webtools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// searchTimeout bounds one search.
const searchTimeout = 20 * time.Second

// maxSearchBody bounds a backend's answer.
const maxSearchBody = 4 << 20

// result is one search result, as the backend ranked it.
type result struct {
	Title   string
	URL     string
	Snippet string
}

// backend is a search service.
type backend interface {
	search(ctx context.Context, query string, count int) ([]result, error)
}

// searxng is a SearXNG instance's JSON API (GET /search?q=…&format=json;
// the instance's settings.yml must list json among search.formats).
// An operator's own server, often on a private network: no address
// guard.
type searxng struct {
	base   string
	client *http.Client
}

func (s *searxng) search(ctx context.Context, query string, count int) ([]result, error) {
	u := strings.TrimSuffix(s.base, "/") + "/search?" + url.Values{"q": {query}, "format": {"json"}}.Encode()
	var body struct {
		Results []struct {
			URL     string `json:"url"`
			Title   string `json:"title"`
			Content string `json:"content"`
		} `json:"results"`
	}
	err := getJSON(ctx, s.client, u, nil, &body, func(status int) string {
		if status == http.StatusForbidden {
			return " (does the instance's settings.yml list json among search.formats?)"
		}
		return ""
	})
	if err != nil {
		return nil, err
	}
	var out []result
	for _, r := range body.Results {
		if len(out) == count {
			break
		}
		out = append(out, result{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	return out, nil
}

// brave is the Brave Search API's web search.
type brave struct {
	endpoint string
	key      string
	client   *http.Client
}

func (b *brave) search(ctx context.Context, query string, count int) ([]result, error) {
	u := b.endpoint + "?" + url.Values{"q": {query}, "count": {strconv.Itoa(count)}}.Encode()
	h := http.Header{"Accept": {"application/json"}, "X-Subscription-Token": {b.key}}
	var body struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := getJSON(ctx, b.client, u, h, &body, func(int) string { return "" }); err != nil {
		return nil, err
	}
	var out []result
	for _, r := range body.Web.Results {
		if len(out) == count {
			break
		}
		// Brave marks the query's words in titles and descriptions with
		// <strong>.
		out = append(out, result{Title: stripTags(r.Title), URL: r.URL, Snippet: stripTags(r.Description)})
	}
	return out, nil
}

// getJSON GETs u and decodes its JSON answer into v; a status other
// than 200 is an error with the start of the answer, and hint's words
// for it.
func getJSON(ctx context.Context, client *http.Client, u string, h http.Header, v any, hint func(status int) string) error {
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for k, vs := range h {
		req.Header[k] = vs
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("the search backend is unreachable: %w", unwrapURL(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxSearchBody))
	if err != nil {
		return fmt.Errorf("read the search backend's answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		excerpt := strings.Join(strings.Fields(string(b[:min(len(b), 300)])), " ")
		return fmt.Errorf("the search backend answered %s%s: %s", resp.Status, hint(resp.StatusCode), excerpt)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("the search backend's answer is not the JSON expected: %w", err)
	}
	return nil
}

// stripTags is s's text, its tags dropped and entities decoded.
func stripTags(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(b.String())
		case html.TextToken:
			b.Write(z.Text())
		}
	}
}

// renderResults is web_search's output.
func renderResults(query string, rs []result) string {
	if len(rs) == 0 {
		return fmt.Sprintf("No results for %q.", query)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Results for %q, best first:\n", query)
	for i, r := range rs {
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, strings.TrimSpace(r.Title), r.URL)
		if s := collapse(r.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
