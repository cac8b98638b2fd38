package slack

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// Streamed answers, for an app configured as a Slack agent (Config.Agent).
//
// A turn's text is one streamed message (chat.startStream in the thread,
// chat.appendStream as the agent writes, chat.stopStream when the turn
// ends), with a task card per tool call (timeline) or per plan entry
// (plan: the mode is fixed when the stream starts, so a turn whose first
// news is a plan streams as one). The text comes from the log: the
// agent.message_delta events of the response being written, then its
// agent.message, which settles it; the message ends up holding the turn's
// messages, in order, each exactly as logged (the deltas of a response
// that never finished are taken back, see abandon).
//
// Appends are batched (at most one per StreamEvery, the text that arrived
// meanwhile in one call) and no message grows past StreamLimit: a long
// answer continues in a new streamed message.
//
// Exactly once: chat.appendStream adds to what is there, so each append
// goes through PostOnce with an intent naming the message and the offset
// it starts at. A restart that finds the intent unconfirmed reads the
// message back: the append is done when the message ends with it. Either
// way the stream is then stopped and the rest of the turn is posted: only
// what the message does not show yet. The same happens when Slack ended
// the stream (a person pressed stop, or it timed out), and a stream Slack
// refuses to start makes the turn post as without the setting.

// streamState is a turn's streamed message.
type streamState struct {
	TS   string `json:"ts,omitempty"`   // the streamed message; "" until it starts
	Mode string `json:"mode,omitempty"` // its task display mode: timeline or plan
	// Off: this turn posts instead (the stream was refused or broke).
	Off bool `json:"off,omitempty"`
	// Final is the logged text the message holds; Open the text of the
	// response being written (Resp), Lead its separator from Final, Prior
	// how much of it earlier messages hold (a message that filled up).
	Final string `json:"final,omitempty"`
	Resp  string `json:"resp,omitempty"`
	Open  string `json:"open,omitempty"`
	Lead  string `json:"lead,omitempty"`
	Prior int    `json:"prior,omitempty"`
	// Sent is how many bytes of Final+Open the message holds.
	Sent int `json:"sent,omitempty"`
	// At (unix ms) is the last append: appends are batched.
	At int64 `json:"at,omitempty"`
	// Shown, once Off, is what the broken stream shows of the open
	// response: posting continues after it.
	Shown string `json:"shown,omitempty"`
	// Last is the turn's previous streamed message, so a restart looking
	// for the one it started does not take that for it.
	Last string `json:"last,omitempty"`
	// Applied is the seq of the last event whose text is in Final or
	// Open: the state is saved with an intent mid-event, and the event
	// rendered again after a restart must not add its text twice.
	Applied uint64 `json:"applied,omitempty"`
	// Settling is the text the message being settled adds, at offset At
	// of Final, until it is sent: posted instead when the stream breaks.
	Settling   string `json:"settling,omitempty"`
	SettlingAt int    `json:"settling_at,omitempty"`
}

// DefaultStreamLimit is the most a streamed message holds (Slack's limit
// of one markdown_text).
const DefaultStreamLimit = 12_000

// streaming reports whether this turn's text streams.
func (rc *render) streaming() bool {
	return rc.p.cfg.Agent && rc.st.Stream != nil && !rc.st.Stream.Off
}

// delta adds streamed text of a response.
func (rc *render) delta(ctx context.Context, e core.Event) (bool, error) {
	var b core.MessageDeltaBody
	if err := e.Decode(&b); err != nil {
		return false, output.Permanent(err)
	}
	s := rc.st.Stream
	if rc.seq <= s.Applied {
		return true, rc.flush(ctx) // rendered again after a restart
	}
	acted := false
	if s.Resp != b.Response && (s.Open != "" || s.Prior > 0) {
		// The response before this one never finished (a retry, a crash):
		// what it streamed is taken back.
		if err := rc.abandon(ctx); err != nil {
			return true, err
		}
		acted = true
	}
	text := b.Text
	if s.Resp != b.Response {
		text = strings.TrimLeft(text, " \t\n")
		if text == "" {
			return acted, nil
		}
		s.Resp, s.Lead, s.Open, s.Prior = b.Response, rc.lead(), rc.lead(), 0
	}
	s.Open += text
	s.Applied = rc.seq
	if time.Now().UnixMilli()-s.At < rc.p.cfg.StreamEvery.Milliseconds() {
		return acted, nil
	}
	return true, rc.flush(ctx)
}

// lead separates a new response's text from what the message holds.
func (rc *render) lead() string {
	if rc.st.Stream.Final != "" {
		return "\n\n"
	}
	return ""
}

// said settles a response's text: the logged message replaces its deltas.
// When the stream breaks before it is sent, what the message does not
// show is posted.
func (rc *render) said(ctx context.Context, text string) (bool, error) {
	s := rc.st.Stream
	acted := false
	if rc.seq > s.Applied {
		if s.Resp == "" && s.Open == "" {
			s.Lead, s.Prior = rc.lead(), 0
		}
		full := s.Lead + text
		rest := ""
		if s.Prior <= len(full) {
			rest = full[s.Prior:]
		}
		if !strings.HasPrefix(rest, s.Open) || s.Prior > len(full) {
			if err := rc.abandon(ctx); err != nil {
				return true, err
			}
			acted = true
			s.Lead = rc.lead()
			rest = s.Lead + text
		}
		s.Settling, s.SettlingAt = rest, len(s.Final)
		s.Final += rest
		s.Open, s.Resp, s.Lead, s.Prior = "", "", "", 0
		s.Applied = rc.seq
	}
	if !s.Off {
		if err := rc.flush(ctx); err != nil {
			return true, err
		}
	}
	if s.Off && s.Settling != "" {
		shown := min(max(s.Sent-s.SettlingAt, 0), len(s.Settling))
		if err := rc.postText(ctx, strings.TrimSpace(s.Settling[shown:])); err != nil {
			return true, err
		}
		acted = true
	}
	s.Settling = ""
	return acted || s.TS != "", nil
}

// abandon takes back the text of a response that never finished: the
// message is stopped and shows what it held before, and a new stream
// takes what comes next.
func (rc *render) abandon(ctx context.Context) error {
	s := rc.st.Stream
	shown := s.Sent > len(s.Final)
	if s.Prior > 0 {
		rc.p.log.Warn("an unfinished response filled an earlier message; it stays", "session_id", rc.session)
	}
	s.Open, s.Resp, s.Lead, s.Prior = "", "", "", 0
	if !shown || s.TS == "" {
		return nil
	}
	if err := rc.stopStream(ctx); err != nil {
		return err
	}
	var err error
	if s.Final == "" {
		err = rc.a.deleteMessage(ctx, rc.channel, s.TS)
	} else {
		err = rc.a.update(ctx, rc.channel, s.TS, slackapi.MsgOptionText(toMrkdwn(s.Final), false))
	}
	if e := slackError(err); e == "message_not_found" {
		err = nil
	}
	if err != nil {
		return err
	}
	s.Last, s.TS, s.Final, s.Sent = s.TS, "", "", 0
	return nil
}

// task shows a task card (a tool call, a plan entry) in the stream.
func (rc *render) task(ctx context.Context, chunks ...slackapi.StreamChunk) (bool, error) {
	return true, rc.flush(ctx, chunks...)
}

// flush sends what the message does not hold yet, with chunks (task and
// plan updates), starting the stream first when needed. Trailing
// whitespace waits: the logged text is trimmed.
func (rc *render) flush(ctx context.Context, chunks ...slackapi.StreamChunk) error {
	s := rc.st.Stream
	for {
		target := strings.TrimRight(s.Final+s.Open, " \t\n")
		pending := ""
		if s.Sent < len(target) {
			pending = target[s.Sent:]
		}
		if pending == "" && len(chunks) == 0 {
			return nil
		}
		room := rc.p.cfg.StreamLimit - s.Sent
		if len(pending) > room {
			if cut := cutAt(pending, room); cut > 0 {
				if err := rc.send(ctx, pending[:cut]); err != nil || s.Off {
					return err
				}
			}
			if err := rc.rollOver(ctx); err != nil || s.Off {
				return err
			}
			continue
		}
		err := rc.send(ctx, pending, chunks...)
		if err == nil && !s.Off {
			s.At = time.Now().UnixMilli()
		}
		return err
	}
}

// cutAt is where to end a message holding at most n bytes of text: after
// the last line break that leaves it at least half full, else at a rune
// boundary.
func cutAt(text string, n int) int {
	if n <= 0 {
		return 0
	}
	if i := strings.LastIndexByte(text[:n], '\n'); i >= n/2 {
		return i + 1
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return n
}

// rollOver stops a full message; the text it could not take continues in
// the next one.
func (rc *render) rollOver(ctx context.Context) error {
	s := rc.st.Stream
	if err := rc.stopStream(ctx); err != nil {
		return err
	}
	if s.Sent >= len(s.Final) {
		moved := s.Sent - len(s.Final)
		s.Prior += moved
		s.Open = s.Open[moved:]
		s.Final = ""
	} else {
		s.Final = s.Final[s.Sent:]
	}
	s.Last, s.TS, s.Sent = s.TS, "", 0
	return nil
}

// send makes one start or append call, exactly once.
func (rc *render) send(ctx context.Context, text string, chunks ...slackapi.StreamChunk) error {
	s := rc.st.Stream
	if s.TS == "" {
		return rc.start(ctx, text, chunks)
	}
	recovered := false
	post := output.Post{
		Key:   fmt.Sprintf("%s:stream:%s:%d", rc.session, s.TS, s.Sent),
		Point: "append",
		Find: func(ctx context.Context, _ output.Intent) (bool, error) {
			recovered = true
			return rc.streamEndsWith(ctx, s.TS, text)
		},
		Do: func(ctx context.Context) error {
			return rc.a.appendStream(ctx, rc.channel, s.TS, streamContent(text, chunks)...)
		},
	}
	err := rc.t.PostOnce(ctx, rc.st, &rc.st.Intent, post)
	switch e := slackError(err); {
	case e == "message_not_in_streaming_state" || e == "message_not_found":
		// Slack ended the stream: the rest of the turn is posted.
		rc.p.log.Info("the streamed message ended; posting the rest", "session_id", rc.session, "slack_error", e)
		return rc.breakStream(ctx, false)
	case err != nil:
		return err
	}
	s.Sent += len(text)
	if recovered {
		return rc.breakStream(ctx, true)
	}
	return nil
}

// start starts the turn's streamed message with its first content.
func (rc *render) start(ctx context.Context, text string, chunks []slackapi.StreamChunk) error {
	s := rc.st.Stream
	if s.Mode == "" {
		s.Mode = string(slackapi.TaskDisplayModeTimeline)
	}
	adopted := false // a restart found the stream it had started
	var ts string
	post := output.Post{
		Key:   fmt.Sprintf("%s:stream:%d:%s", rc.session, rc.seq, s.Last),
		Point: "start_stream",
		Find: func(ctx context.Context, in output.Intent) (found bool, err error) {
			ts, found, err = rc.findStream(ctx, in.At, s.Last)
			adopted = found
			return found, err
		},
		Do: func(ctx context.Context) (err error) {
			opts := []slackapi.MsgOption{slackapi.MsgOptionTS(rc.thread), slackapi.MsgOptionTaskDisplayMode(slackapi.TaskDisplayMode(s.Mode))}
			if rc.st.Asker != "" {
				opts = append(opts, slackapi.MsgOptionRecipientUserID(rc.st.Asker), slackapi.MsgOptionRecipientTeamID(rc.st.AskerTeam))
			}
			ts, err = rc.a.startStream(ctx, rc.channel, append(opts, streamContent(text, chunks)...)...)
			return err
		},
	}
	err := rc.t.PostOnce(ctx, rc.st, &rc.st.Intent, post)
	if e := slackError(err); e != "" {
		rc.p.log.Info("streamed answers unavailable in this thread; posting", "session_id", rc.session, "slack_error", e)
		s.Off = true
		return rc.startProgress(ctx)
	}
	if err != nil {
		return err
	}
	s.TS = ts
	if adopted {
		// What the found message holds is unknown: it was started with
		// this text, or nothing more. The turn posts from here.
		if st, err := rc.streamEndsWith(ctx, ts, text); err == nil && st {
			s.Sent += len(text)
		}
		return rc.breakStream(ctx, true)
	}
	s.Sent += len(text)
	return nil
}

// streamContent is an append's text and chunks: the text as
// markdown_text, or as the first chunk when chunks go with it.
func streamContent(text string, chunks []slackapi.StreamChunk) []slackapi.MsgOption {
	if len(chunks) == 0 {
		return []slackapi.MsgOption{slackapi.MsgOptionMarkdownText(text)}
	}
	if text != "" {
		chunks = append([]slackapi.StreamChunk{slackapi.NewMarkdownTextChunk(text)}, chunks...)
	}
	return []slackapi.MsgOption{slackapi.MsgOptionChunks(chunks...)}
}

// breakStream ends streaming for the rest of the turn: the message is
// stopped (when stop; Slack stopped it otherwise) and what it shows of the
// open response is remembered, so posting continues after it.
func (rc *render) breakStream(ctx context.Context, stop bool) error {
	s := rc.st.Stream
	if stop {
		if err := rc.stopStream(ctx); err != nil {
			return err
		}
	}
	if s.Sent > len(s.Final) {
		s.Shown = s.Open[:min(len(s.Open), s.Sent-len(s.Final))]
	}
	s.Off = true
	return nil
}

// stopStream stops the message; one already stopped is fine.
func (rc *render) stopStream(ctx context.Context) error {
	s := rc.st.Stream
	if s.TS == "" {
		return nil
	}
	err := rc.a.stopStream(ctx, rc.channel, s.TS)
	if e := slackError(err); e == "message_not_in_streaming_state" || e == "message_not_found" {
		return nil
	}
	return err
}

// postRest posts, once the stream broke, what a settled message adds to
// what the broken stream showed of it.
func (rc *render) postRest(ctx context.Context, text string) error {
	s := rc.st.Stream
	full := s.Lead + text
	rest := text
	if s.Shown != "" && s.Prior <= len(full) && strings.HasPrefix(full[s.Prior:], s.Shown) {
		rest = strings.TrimSpace(full[s.Prior+len(s.Shown):])
	}
	s.Shown, s.Open, s.Resp, s.Lead, s.Prior = "", "", "", "", 0
	return rc.postText(ctx, rest)
}

// postText posts text into the thread as replies, exactly once.
func (rc *render) postText(ctx context.Context, text string) error {
	if text == "" {
		return nil
	}
	var msgs []outMsg
	for _, part := range replies(toMrkdwn(text)) {
		msgs = append(msgs, outMsg{texts: part})
	}
	return rc.postParts(ctx, msgs, true)
}

// streamEndsWith reads a streamed message back: whether its text ends
// with text (true for no text: nothing to look for).
func (rc *render) streamEndsWith(ctx context.Context, ts, text string) (bool, error) {
	m, found, err := rc.readMessage(ctx, ts)
	if err != nil || !found {
		return false, err
	}
	return strings.HasSuffix(strings.TrimSpace(m.Text), strings.TrimSpace(text)), nil
}

// readMessage reads one message of the thread.
func (rc *render) readMessage(ctx context.Context, ts string) (slackapi.Message, bool, error) {
	params := slackapi.GetConversationRepliesParameters{ChannelID: rc.channel, Timestamp: rc.thread, Inclusive: true, Oldest: ts, Limit: 100}
	for range 50 {
		msgs, next, err := rc.a.replies(ctx, params)
		if err != nil {
			return slackapi.Message{}, false, err
		}
		for _, m := range msgs {
			if m.Timestamp == ts {
				return m, true, nil
			}
		}
		if next == "" {
			break
		}
		params.Cursor = next
	}
	return slackapi.Message{}, false, nil
}

// findStream looks for a streamed message the bot started in the thread
// after the intent was saved (a little before, for clocks) and after
// last: the newest of the bot's messages there without the metadata every
// post carries.
func (rc *render) findStream(ctx context.Context, at int64, last string) (string, bool, error) {
	params := slackapi.GetConversationRepliesParameters{ChannelID: rc.channel, Timestamp: rc.thread, Inclusive: true,
		IncludeAllMetadata: true, Limit: 100, Oldest: fmt.Sprintf("%d.000000", at-600)}
	found := ""
	for range 50 {
		msgs, next, err := rc.a.replies(ctx, params)
		if err != nil {
			return "", false, err
		}
		for _, m := range msgs {
			if m.Timestamp == rc.thread || m.BotID == "" || m.Metadata.EventType != "" || (last != "" && m.Timestamp <= last) {
				continue
			}
			if m.Timestamp > found {
				found = m.Timestamp
			}
		}
		if next == "" {
			break
		}
		params.Cursor = next
	}
	return found, found != "", nil
}

// streamed handles a plain message of the agent (its text, or what it
// said with a tool; not a thought, a question or a note) while the turn
// streams: done reports that it was
// handled, so the caller does not post it as well.
func (rc *render) streamed(ctx context.Context, level core.Level, b core.MessageBody) (acted, done bool, err error) {
	s := rc.st.Stream
	// A question goes out as a post: its answers are buttons.
	asked := b.ToolUseID != "" && rc.st.Tools[b.ToolUseID].Name == "ask"
	if !rc.p.cfg.Agent || s == nil || b.Kind != "" || asked {
		return false, false, nil
	}
	// A message whose settling broke the stream is finished by said, after
	// a restart too: it posts what the stream does not show.
	if !s.Off || (s.Settling != "" && rc.seq == s.Applied) {
		if err := rc.working(ctx); err != nil {
			return true, true, err
		}
		acted, err := rc.said(ctx, b.Text)
		return acted, true, err
	}
	if level != core.LevelUser {
		// Shown was part of this response, which posting leaves out.
		s.Shown, s.Open, s.Resp, s.Lead, s.Prior = "", "", "", "", 0
		return false, false, nil
	}
	return true, true, rc.postRest(ctx, b.Text)
}

// toolStarted shows a tool call as an in-progress task card; a call of
// the plan tool shows as the plan it logs.
func (rc *render) toolStarted(ctx context.Context, b core.ToolUseBody) (bool, error) {
	if err := rc.working(ctx); err != nil {
		return true, err
	}
	if b.Name == core.PlanTool {
		if rc.st.Stream.TS == "" {
			rc.st.Stream.Mode = string(slackapi.TaskDisplayModePlan)
		}
		return false, nil
	}
	t := slackapi.NewTaskUpdateChunk(b.ToolUseID, clip(b.Name, 100))
	t.Status, t.Details = slackapi.TaskCardStatusInProgress, clip(string(b.Input), 200)
	return rc.task(ctx, t)
}

// toolDone completes a tool call's task card with a short output.
func (rc *render) toolDone(ctx context.Context, e core.Event) (bool, error) {
	if !rc.streaming() {
		return false, nil
	}
	var b core.ToolResultBody
	if err := e.Decode(&b); err != nil {
		return false, output.Permanent(err)
	}
	ref, ok := rc.st.Tools[b.ToolUseID]
	if !ok || ref.Name == core.PlanTool {
		return false, nil
	}
	t := slackapi.NewTaskUpdateChunk(b.ToolUseID, clip(ref.Name, 100))
	t.Status, t.Output = slackapi.TaskCardStatusComplete, clip(b.Output, 200)
	if b.IsError {
		t.Status = slackapi.TaskCardStatusError
	}
	return rc.task(ctx, t)
}

// endStream ends the turn's stream: what is left is sent, the text of a
// response that never finished is taken back, and the message stops.
func (rc *render) endStream(ctx context.Context) error {
	s := rc.st.Stream
	if !rc.p.cfg.Agent || s == nil {
		return nil
	}
	if !s.Off {
		if s.Open != "" || s.Prior > 0 {
			if err := rc.abandon(ctx); err != nil {
				return err
			}
		}
		if err := rc.flush(ctx); err != nil {
			return err
		}
		if !s.Off {
			if err := rc.stopStream(ctx); err != nil {
				return err
			}
		}
	}
	if s.TS != "" {
		rc.st.LastStream = s.TS
	} else if s.Last != "" {
		rc.st.LastStream = s.Last
	}
	return nil
}
