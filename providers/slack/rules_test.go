package slack

import (
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

func TestDecide(t *testing.T) {
	bot := identity{botUserID: "U0BOT", botID: "B0BOT"}
	root := human("1.000100", "", "U1", "<@U0BOT> plan the launch")
	reply := human("2.000200", "1.000100", "U2", "also this")
	mentionReply := human("3.000300", "1.000100", "U2", "<@U0BOT> and this?")
	own := human("4.000400", "1.000100", "U0BOT", "my answer")
	own.BotID = "B0BOT"
	otherBot := human("5.000500", "1.000100", "", "<@U0BOT> I am a bot")
	otherBot.BotID = "B0OTHER"
	dm := fakeslack.Message{Team: "T0001", Channel: "D0001", TS: "6.000600", User: "U1", Text: "hi"}
	dmReply := fakeslack.Message{Team: "T0001", Channel: "D0001", TS: "7.000700", ThreadTS: "6.000600", User: "U1", Text: "more"}
	key := "slack:T0001:C0001:1.000100"
	tests := []struct {
		name     string
		inner    map[string]any
		id       identity
		want     act
		wantKey  string
		wantText string
		dedupe   []string
		// twin: Slack sends the message as a mention and a message event.
		twin bool
	}{
		{name: "mention starts the thread of its message", inner: fakeslack.Mention(root), id: bot, want: actStart, wantKey: key,
			wantText: "<@U1>: plan the launch", dedupe: []string{"slack:event:Ev0001", "slack:msg:T0001:C0001:1.000100"}, twin: true},
		{name: "mention in a thread continues that thread", inner: fakeslack.Mention(mentionReply), id: bot, want: actStart, wantKey: key,
			dedupe: []string{"slack:event:Ev0001", "slack:msg:T0001:C0001:3.000300"}, twin: true},
		{name: "the same mention as a message event has the same identity", inner: fakeslack.MessageEvent(mentionReply, "channel"), id: bot, want: actStart, wantKey: key,
			dedupe: []string{"slack:event:Ev0001", "slack:msg:T0001:C0001:3.000300"}, twin: true},
		{name: "plain reply steers", inner: fakeslack.MessageEvent(reply, "channel"), id: bot, want: actSteer, wantKey: key, wantText: "<@U2>: also this"},
		{name: "plain channel message is ignored", inner: fakeslack.MessageEvent(human("8.1", "", "U1", "lunch?"), "channel"), id: bot, want: actIgnore},
		{name: "the bot's own message is ignored", inner: fakeslack.MessageEvent(own, "channel"), id: bot, want: actIgnore},
		{name: "the bot's own mention is ignored", inner: fakeslack.Mention(own), id: bot, want: actIgnore},
		{name: "another bot is ignored", inner: fakeslack.MessageEvent(otherBot, "channel"), id: bot, want: actIgnore},
		{name: "another bot when bots are allowed", inner: fakeslack.MessageEvent(otherBot, "channel"), id: identity{botUserID: "U0BOT", botID: "B0BOT", allowBots: true}, want: actStart, wantKey: key, twin: true},
		{name: "own messages stay ignored when bots are allowed", inner: fakeslack.MessageEvent(own, "channel"), id: identity{botUserID: "U0BOT", botID: "B0BOT", allowBots: true}, want: actIgnore},
		{name: "a DM starts a session of its own", inner: fakeslack.MessageEvent(dm, "im"), id: bot, want: actStart, wantKey: "slack:T0001:D0001:6.000600", wantText: "<@U1>: hi"},
		{name: "a DM thread reply continues it", inner: fakeslack.MessageEvent(dmReply, "im"), id: bot, want: actStart, wantKey: "slack:T0001:D0001:6.000600"},
		{name: "an edit in a thread steers as an edit", inner: fakeslack.Edited(reply, "also that", "channel"), id: bot, want: actSteer, wantKey: key,
			wantText: "<@U2> (edited an earlier message): also that"},
		{name: "an edit that adds a mention starts", inner: fakeslack.Edited(human("9.000900", "", "U3", "hey"), "hey <@U0BOT>", "channel"), id: bot, want: actStart, wantKey: "slack:T0001:C0001:9.000900"},
		{name: "an unfurl is not an edit", inner: map[string]any{"type": "message", "subtype": "message_changed", "channel": "C0001", "message": map[string]any{"type": "message", "user": "U1", "text": "x", "ts": "1.000100"}, "previous_message": map[string]any{"text": "x"}}, id: bot, want: actIgnore},
		{name: "deletions are not forwarded", inner: map[string]any{"type": "message", "subtype": "message_deleted", "channel": "C0001", "deleted_ts": "2.000200", "ts": "9.1"}, id: bot, want: actIgnore},
		{name: "channel joins are ignored", inner: map[string]any{"type": "message", "subtype": "channel_join", "channel": "C0001", "user": "U9", "ts": "9.2", "text": "<@U9> has joined"}, id: bot, want: actIgnore},
		{name: "stop reaction interrupts", inner: fakeslack.ReactionAdded("U1", "octagonal_sign", "C0001", "1.000100"), id: bot, want: actInterrupt, wantKey: key, dedupe: []string{"slack:event:Ev0001"}},
		{name: "Slack's stop on the agent session interrupts", inner: map[string]any{"type": "agent_session_stopped", "channel": "C0001", "thread_ts": "1.000100", "user": "U1",
			"streaming_message_ts": []string{"1.000300"}, "event_ts": "9.3"}, id: bot, want: actInterrupt, wantKey: key, dedupe: []string{"slack:event:Ev0001"}},
		{name: "an agent session stop without its thread is ignored", inner: map[string]any{"type": "agent_session_stopped", "channel": "C0001", "user": "U1", "event_ts": "9.3"}, id: bot, want: actIgnore},
		{name: "other reactions are ignored", inner: fakeslack.ReactionAdded("U1", "tada", "C0001", "1.000100"), id: bot, want: actIgnore},
		{name: "uninstall forgets", inner: map[string]any{"type": "app_uninstalled"}, id: bot, want: actForget},
		{name: "the bot's token revoked forgets", inner: map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"bot": []string{"U0BOT"}}}, id: bot, want: actForget},
		{name: "other users' tokens revoked is ignored", inner: map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": []string{"U1"}}}, id: bot, want: actIgnore},
		{name: "a colon in a channel id is refused", inner: fakeslack.Mention(fakeslack.Message{Team: "T0001", Channel: "C:1", TS: "1.1", User: "U1", Text: "<@U0BOT>"}), id: bot, want: actIgnore},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := Decode(envelope(tc.inner))
			if err != nil {
				t.Fatal(err)
			}
			d := decide(env, tc.id)
			if d.act != tc.want {
				t.Fatalf("act %v (%s), want %v", d.act, d.why, tc.want)
			}
			if tc.wantKey != "" && d.key != tc.wantKey {
				t.Fatalf("key %q, want %q", d.key, tc.wantKey)
			}
			if tc.wantText != "" && d.text != tc.wantText {
				t.Fatalf("text %q, want %q", d.text, tc.wantText)
			}
			if tc.dedupe != nil && !slices.Equal(d.dedupe, tc.dedupe) {
				t.Fatalf("dedupe %v, want %v", d.dedupe, tc.dedupe)
			}
			if d.twin != tc.twin {
				t.Fatalf("twin %v, want %v", d.twin, tc.twin)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	team, channel, thread, err := parseKey(sessionKey("T1", "C1", "1.2"))
	if err != nil || team != "T1" || channel != "C1" || thread != "1.2" {
		t.Fatalf("%q %q %q %v", team, channel, thread, err)
	}
	for _, bad := range []string{"", "slack:T1:C1", "github:T1:C1:1.2", "slack:T1::1.2", "slack:T1:C1:1.2:x"} {
		if _, _, _, err := parseKey(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
