package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	slackapi "github.com/slack-go/slack"
)

func (rc *render) key(part int) string {
	return fmt.Sprintf("%s:%d:%d", rc.session, rc.seq, part)
}

// postParts posts an event's messages in order, resuming after the parts
// already posted (the state says which).
func (rc *render) postParts(ctx context.Context, msgs []outMsg, reply bool) error {
	st := rc.st
	from := 0
	if st.PartSeq == rc.seq {
		from = st.Parts
	}
	for i := from; i < len(msgs); i++ {
		// Part 0 of a turn.started is its status message: replies count
		// from 1 so their keys never meet it.
		if _, err := rc.postOnce(ctx, rc.key(i+1), msgs[i], reply); err != nil {
			return err
		}
		st.PartSeq, st.Parts = rc.seq, i+1
	}
	st.PartSeq, st.Parts = 0, 0
	return nil
}

// postOnce posts msg into the thread unless the post under key already
// happened (see renderer), and returns the message's ts.
func (rc *render) postOnce(ctx context.Context, key string, msg outMsg, reply bool) (string, error) {
	st := rc.st
	if st.Intent != nil && st.Intent.Key == key {
		ts, found, err := rc.findPosted(ctx, key, st.Intent.At)
		if err != nil {
			return "", err
		}
		if found {
			rc.p.log.Info("post found in the thread after a restart; not posting again", "session_id", rc.session, "key", key)
			st.Intent = nil
			return ts, nil
		}
	}
	st.Intent = &intent{Key: key, At: time.Now().Unix()}
	if err := rc.save(ctx); err != nil {
		return "", err
	}
	if h := rc.p.cfg.Hooks; reply && h != nil && h.BeforePost != nil {
		h.BeforePost()
	}
	opts := append(msg.options(), slackapi.MsgOptionTS(rc.thread),
		slackapi.MsgOptionMetadata(slackapi.SlackMetadata{EventType: metadataType, EventPayload: map[string]any{"key": key}}))
	ts, err := rc.a.post(ctx, rc.channel, opts...)
	if err != nil {
		return "", err
	}
	if h := rc.p.cfg.Hooks; reply && h != nil && h.AfterPost != nil {
		h.AfterPost()
	}
	st.Intent = nil
	return ts, nil
}

// findPosted looks for the gateway's post under key in the thread, from a
// little before the intent was recorded.
func (rc *render) findPosted(ctx context.Context, key string, at int64) (string, bool, error) {
	params := slackapi.GetConversationRepliesParameters{ChannelID: rc.channel, Timestamp: rc.thread, Inclusive: true,
		IncludeAllMetadata: true, Limit: 100, Oldest: fmt.Sprintf("%d.000000", at-600)}
	for range 50 {
		msgs, next, err := rc.a.replies(ctx, params)
		if err != nil {
			return "", false, err
		}
		for _, m := range msgs {
			if m.Metadata.EventType == metadataType && fmt.Sprint(m.Metadata.EventPayload["key"]) == key {
				return m.Timestamp, true, nil
			}
		}
		if next == "" {
			break
		}
		params.Cursor = next
	}
	return "", false, nil
}

// save persists the state now, at the position before this event.
func (rc *render) save(ctx context.Context) error {
	raw, err := json.Marshal(rc.st)
	if err != nil {
		return err
	}
	rc.t.State = raw
	return rc.t.Save(ctx)
}
