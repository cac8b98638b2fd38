package slack

import (
	"context"
	"strconv"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
)

// primeTimeout bounds the wait for the thread's history (a rate limit
// included): the first turn goes ahead without it rather than stall.
const primeTimeout = 20 * time.Second

// Prime gives a new session the thread's messages before the mention
// that started it (conversations.replies, one call of at most
// HistoryLimit messages, which is all Slack allows apps outside the
// Marketplace per minute). It returns one user.message event (level
// internal, actor system) to log before the first turn, or none when the
// mention started the thread, the session has already run, or Slack does
// not answer in time.
func (p *Provider) Prime(ctx context.Context, s *core.Session) ([]core.Event, error) {
	if s.Origin == nil || s.Origin.Provider != Name || s.LastSeq != 0 {
		return nil, nil
	}
	_, channel, thread, err := parseKey(s.Origin.Key)
	if err != nil {
		return nil, nil
	}
	pending, err := p.cfg.Sessions.Pending(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	var first *msgRef
	for _, e := range pending {
		if first = slackRef(e); first != nil {
			break
		}
	}
	if first == nil || first.TS == thread {
		return nil, nil // the mention is the thread's first message
	}
	in, err := p.sessionInstallation(ctx, s)
	if err != nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, primeTimeout)
	defer cancel()
	a, err := p.client(ctx, in)
	if err != nil {
		return nil, nil
	}
	msgs, next, err := a.replies(ctx, slackapi.GetConversationRepliesParameters{ChannelID: channel, Timestamp: thread, Latest: first.TS, Limit: p.cfg.HistoryLimit})
	if err != nil {
		p.log.Warn("thread history unavailable; the first turn starts without it", "session_id", s.ID, "err", err)
		return nil, nil
	}
	var earlier []slackapi.Message
	for _, m := range msgs {
		if tsBefore(m.Timestamp, first.TS) {
			earlier = append(earlier, m)
		}
	}
	if len(earlier) == 0 {
		return nil, nil
	}
	text := "Earlier messages in this Slack thread, before you were mentioned:\n" + transcript(earlier, in.Metadata["bot_user_id"], len(earlier))
	if next != "" {
		text += "(later messages before the mention are not shown; read the thread with the slack tools if you need them)\n"
	}
	return []core.Event{core.NewEvent(core.TypeUserMessage, core.LevelInternal, core.ActorSystem, core.MessageBody{Text: text})}, nil
}

// tsBefore orders Slack timestamps ("<seconds>.<micros>") numerically.
func tsBefore(a, b string) bool {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	ai, _ := strconv.ParseInt(as, 10, 64)
	bi, _ := strconv.ParseInt(bs, 10, 64)
	if ai != bi {
		return ai < bi
	}
	return af < bf
}
