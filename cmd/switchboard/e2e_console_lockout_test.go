package main_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"
)

// TestConsoleSignInLockout: 60 wrong sign-ins from one address sent at
// once, to one gateway or spread over two replicas sharing a database,
// get at most five 401s (the documented limit: five a minute) and 429 for
// the rest; the right token is then refused too.
func TestConsoleSignInLockout(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) []string
	}{
		{"one gateway", func(t *testing.T) []string { return []string{startServer(t, t.TempDir(), nil).url} }},
		{"two replicas", func(t *testing.T) []string {
			r := startReplicas(t, nil)
			return []string{r.srv[0].url, r.srv[1].url}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bases := tc.start(t)
			const n = 60
			codes := make([]int, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					resp, err := noRedirects.PostForm(bases[i%len(bases)]+"/console/sign-in", url.Values{"token": {"a wrong guess"}})
					if err != nil {
						errs[i] = err
						return
					}
					resp.Body.Close()
					codes[i] = resp.StatusCode
				})
			}
			wg.Wait()
			byCode := map[int]int{}
			for i := range n {
				if errs[i] != nil {
					t.Fatalf("sign-in %d: %v", i, errs[i])
				}
				byCode[codes[i]]++
			}
			t.Logf("%d parallel wrong sign-ins over %d gateway(s): %v", n, len(bases), byCode)
			if byCode[http.StatusUnauthorized] > 5 || byCode[http.StatusUnauthorized]+byCode[http.StatusTooManyRequests] != n {
				t.Fatalf("answers %v: want at most 5 × 401, the rest 429", byCode)
			}
			for _, base := range bases {
				resp, err := noRedirects.PostForm(base+"/console/sign-in", url.Values{"token": {adminToken}})
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusTooManyRequests {
					t.Fatalf("the right token while locked out: %d", resp.StatusCode)
				}
			}
		})
	}
}
