package linear

import (
	"context"
	"errors"
	"time"

	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/output"
)

// Posting activities: exactly once (intent, lookup), inside the
// workspace's budget, through Linear's rate limits.

// post posts an activity; with once, exactly once (output.PostOnce: the
// activity's id is the intent's key). A response is crash tests'
// failpoint.
func (rc *render) post(ctx context.Context, a activity, p priority, once bool) error {
	if !once {
		return rc.send(ctx, a, p)
	}
	post := output.Post{
		Key:  a.ID,
		Find: func(ctx context.Context, _ output.Intent) (bool, error) { return rc.lookup(ctx, a.ID, p) },
		Do:   func(ctx context.Context) error { return rc.send(ctx, a, p) },
	}
	if a.kind() == "response" {
		post.Point = "post"
	}
	return rc.t.PostOnce(ctx, rc.st, &rc.st.Intent, post)
}

// lookup reports whether Linear has the activity an unconfirmed intent
// announced, within the budget and waiting out RATELIMITED answers: a
// lookup that fails must not pass for "posted". One Linear refuses as a
// user error counts as not found: the post that follows carries the same
// id, which Linear refuses if it has it.
func (rc *render) lookup(ctx context.Context, id string, p priority) (bool, error) {
	for {
		if err := rc.p.budgets.wait(ctx, rc.org, p); err != nil {
			return false, err
		}
		found, err := rc.api.activityExists(ctx, id)
		if ae := asAPIError(err); ae != nil && ae.UserError {
			return false, nil
		}
		if retry, err := rc.settle(err); !retry {
			return found && err == nil, err
		}
	}
}

// send creates an activity within the organization's budget, waiting out
// RATELIMITED answers; an activity Linear refuses (userError) or has
// already is done with.
func (rc *render) send(ctx context.Context, a activity, p priority) error {
	for {
		if err := rc.p.budgets.wait(ctx, rc.org, p); err != nil {
			return err
		}
		err := rc.api.createActivity(ctx, a)
		if ae := asAPIError(err); ae != nil && ae.UserError {
			rc.p.log.Warn("linear refused an activity; skipping it", "session_id", rc.session, "kind", a.kind(), "err", err)
			return nil
		}
		if retry, err := rc.settle(err); !retry {
			return err
		}
	}
}

// settle decides a call's error: retry (RATELIMITED, the budget blocked
// until Linear's reset), done (nil, or the entity exists), permanent
// (the token is gone), or an error for the sink's own backoff.
func (rc *render) settle(err error) (retry bool, _ error) {
	if err == nil {
		return false, nil
	}
	ae := asAPIError(err)
	switch {
	case errors.Is(err, oauth.ErrNoToken):
		return false, output.Permanent(err)
	case ae == nil:
		return false, err
	case ae.Exists:
		return false, nil
	case ae.RateLimited:
		until := ae.Reset
		now := rc.p.cfg.Now()
		if until.Before(now.Add(time.Second)) || until.After(now.Add(time.Hour)) {
			until = now.Add(5 * time.Second)
		}
		rc.p.log.Warn("linear rate limited; waiting for the reset", "organization_id", rc.org, "until", until)
		rc.p.budgets.block(rc.org, until)
		return true, nil
	case ae.Unauthorized:
		return false, output.Permanent(err)
	}
	return false, err
}
