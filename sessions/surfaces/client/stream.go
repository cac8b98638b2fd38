package client

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strconv"
)

// Stream opens the session's event stream after seq after, at the level
// threshold ("" for all), and returns the answer unread, for a caller
// that relays the SSE bytes as they come (the console does, to a browser
// that cannot carry the token). The caller closes the body. Unlike
// Follow it does not reconnect: the relay's own client does, with
// Last-Event-ID.
func (c *Client) Stream(ctx context.Context, id string, after uint64, level string) (*http.Response, error) {
	path := pathf("/v1/sessions/%s/events", id)
	hdr := http.Header{"Accept": {"text/event-stream"}, "Cache-Control": {"no-cache"}}
	if after > 0 {
		hdr.Set("Last-Event-ID", strconv.FormatUint(after, 10))
	}
	req, err := c.newRequest(ctx, request{method: http.MethodGet, path: path, query: EventsQuery{After: after, Level: level}.values(), header: hdr})
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, transportError(http.MethodGet, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		return nil, readError(resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return nil, &APIError{Status: http.StatusNotAcceptable, Type: "invalid_request",
			Message: fmt.Sprintf("GET %s: want an event stream, got Content-Type %q", path, resp.Header.Get("Content-Type"))}
	}
	return resp, nil
}
