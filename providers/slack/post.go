package slack

import (
	"context"
	"fmt"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/providers/output"
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

// postOnce posts msg into the thread exactly once (output.PostOnce, the
// key in the message's metadata), and returns the message's ts. Only a
// reply (not the status message) is a crash tests' failpoint.
func (rc *render) postOnce(ctx context.Context, key string, msg outMsg, reply bool) (string, error) {
	var ts string
	post := output.Post{
		Key: key,
		Find: func(ctx context.Context, in output.Intent) (found bool, err error) {
			ts, found, err = rc.findPosted(ctx, key, in.At)
			return found, err
		},
		Do: func(ctx context.Context) (err error) {
			opts := append(msg.options(), slackapi.MsgOptionTS(rc.thread),
				slackapi.MsgOptionMetadata(slackapi.SlackMetadata{EventType: metadataType, EventPayload: map[string]any{"key": key}}))
			ts, err = rc.a.post(ctx, rc.channel, opts...)
			return err
		},
	}
	if reply {
		post.Point = "post"
	}
	if err := rc.t.PostOnce(ctx, rc.st, &rc.st.Intent, post); err != nil {
		return "", err
	}
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
