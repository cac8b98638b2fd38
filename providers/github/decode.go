package github

import (
	"fmt"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
)

// handled are the events the intake decodes; every other event is
// answered 200 and ignored without being decoded.
var handled = map[string]bool{
	"ping": true, "installation": true, "installation_repositories": true,
	"issue_comment": true, "pull_request_review_comment": true, "pull_request_review": true,
	"issues": true, "pull_request": true, "check_run": true,
}

// Decode decodes a webhook body of the given X-GitHub-Event into
// go-github's type for it; nil and no error for an event the gateway does
// not handle. A body that does not decode is core.ErrInvalid (a 400).
func Decode(event string, body []byte) (any, error) {
	if !handled[event] {
		return nil, nil
	}
	ev, err := gh.ParseWebHook(event, body)
	if err != nil {
		return nil, fmt.Errorf("decode github %s event: %v: %w", event, err, core.ErrInvalid)
	}
	return ev, nil
}
