package slack

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/oauth"
	"github.com/switchboardhq/switchboard/providers/output"
)

// api is a Web API client that waits out rate limits: a 429 is retried
// after its Retry-After, for as long as the caller's context allows, so
// a rate limit delays a call and never drops it.
type api struct {
	c   *slackapi.Client
	log *slog.Logger
}

// do runs fn until it is not rate-limited.
func (a *api) do(ctx context.Context, method string, fn func(ctx context.Context) error) error {
	for {
		err := fn(ctx)
		var rl *slackapi.RateLimitedError
		if !errors.As(err, &rl) {
			return err
		}
		wait := max(rl.RetryAfter, time.Second)
		a.log.Info("slack rate limit: waiting", "method", method, "retry_after", wait)
		if !sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// slackError is the ok:false error of a call ("" when err is not one).
func slackError(err error) string {
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	var sep *slackapi.SlackErrorResponse
	if errors.As(err, &sep) {
		return sep.Err
	}
	return ""
}

// transientErrors are the ok:false answers worth retrying; every other
// one (channel_not_found, not_in_channel, token_revoked, …) will answer
// the same again.
var transientErrors = []string{"ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout", "token_expired"}

// classify marks errors retrying cannot fix as permanent for the sink.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, oauth.ErrNoToken) {
		return output.Permanent(err)
	}
	if e := slackError(err); e != "" && !slices.Contains(transientErrors, e) {
		return output.Permanent(err)
	}
	return err
}

// react adds a reaction; one already there is fine (a retried render).
func (a *api) react(ctx context.Context, channel, ts, name string) error {
	err := a.do(ctx, "reactions.add", func(ctx context.Context) error {
		return a.c.AddReactionContext(ctx, name, slackapi.NewRefToMessage(channel, ts))
	})
	if slackError(err) == "already_reacted" {
		return nil
	}
	return err
}

// post posts a message; thread is the thread's ts.
func (a *api) post(ctx context.Context, channel string, opts ...slackapi.MsgOption) (string, error) {
	var ts string
	err := a.do(ctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		_, ts, err = a.c.PostMessageContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// update edits a message the bot posted.
func (a *api) update(ctx context.Context, channel, ts string, opts ...slackapi.MsgOption) error {
	return a.do(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := a.c.UpdateMessageContext(ctx, channel, ts, opts...)
		return err
	})
}

// setStatus sets (or, with "", clears) the assistant thread status.
func (a *api) setStatus(ctx context.Context, channel, thread, status string) error {
	return a.do(ctx, "assistant.threads.setStatus", func(ctx context.Context) error {
		return a.c.SetAssistantThreadsStatusContext(ctx, slackapi.AssistantThreadsSetStatusParameters{ChannelID: channel, ThreadTS: thread, Status: status})
	})
}

// replies reads one page of a thread.
func (a *api) replies(ctx context.Context, p slackapi.GetConversationRepliesParameters) (msgs []slackapi.Message, next string, err error) {
	err = a.do(ctx, "conversations.replies", func(ctx context.Context) error {
		var err error
		msgs, _, next, err = a.c.GetConversationRepliesContext(ctx, &p)
		return err
	})
	return msgs, next, err
}

// startStream starts a streamed message in a thread and returns its ts.
func (a *api) startStream(ctx context.Context, channel string, opts ...slackapi.MsgOption) (string, error) {
	var ts string
	err := a.do(ctx, "chat.startStream", func(ctx context.Context) error {
		var err error
		_, ts, err = a.c.StartStreamContext(ctx, channel, opts...)
		return err
	})
	return ts, err
}

// appendStream adds to a streamed message; stopStream ends it.
func (a *api) appendStream(ctx context.Context, channel, ts string, opts ...slackapi.MsgOption) error {
	return a.do(ctx, "chat.appendStream", func(ctx context.Context) error {
		_, _, err := a.c.AppendStreamContext(ctx, channel, ts, opts...)
		return err
	})
}

func (a *api) stopStream(ctx context.Context, channel, ts string, opts ...slackapi.MsgOption) error {
	return a.do(ctx, "chat.stopStream", func(ctx context.Context) error {
		_, _, err := a.c.StopStreamContext(ctx, channel, ts, opts...)
		return err
	})
}

// deleteMessage deletes a message the bot posted.
func (a *api) deleteMessage(ctx context.Context, channel, ts string) error {
	return a.do(ctx, "chat.delete", func(ctx context.Context) error {
		_, _, err := a.c.DeleteMessageContext(ctx, channel, ts)
		return err
	})
}

// setAgentStatus sets the thread's agent session status; title and
// initiator count only when the call creates the session.
func (a *api) setAgentStatus(ctx context.Context, p slackapi.AgentSessionSetStatusParameters) error {
	return a.do(ctx, "agents.sessions.setStatus", func(ctx context.Context) error {
		_, err := a.c.SetAgentSessionStatusContext(ctx, p)
		return err
	})
}
