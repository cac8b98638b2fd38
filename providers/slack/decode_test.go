package slack

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
)

var testTeam = fakeslack.Team{ID: "T0001", Name: "Acme", BotUserID: "U0BOT", BotID: "B0BOT", AppID: "A0APP"}

func human(ts, thread, user, text string) fakeslack.Message {
	return fakeslack.Message{Team: "T0001", Channel: "C0001", Type: "message", TS: ts, ThreadTS: thread, User: user, Text: text}
}

func envelope(inner map[string]any) []byte {
	return fakeslack.Event{Team: testTeam, EventID: "Ev0001", Inner: inner}.JSON()
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantErr   bool
		wantType  string
		wantInner string
		check     func(t *testing.T, env *Envelope)
	}{
		{name: "url_verification", body: `{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`,
			wantType: "url_verification", check: func(t *testing.T, env *Envelope) {
				if env.Challenge != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
					t.Fatalf("challenge %q", env.Challenge)
				}
			}},
		{name: "app_mention with authorizations and event_context", body: string(envelope(fakeslack.Mention(human("1515449522.000016", "", "U061F7AUR", "<@U0BOT> is it everything a river should be?")))),
			wantType: "event_callback", wantInner: "app_mention", check: func(t *testing.T, env *Envelope) {
				if env.Mention.User != "U061F7AUR" || env.Mention.Channel != "C0001" || env.EventID != "Ev0001" || env.tenant() != "T0001" || env.botUserID() != "U0BOT" || env.EventContext == "" {
					t.Fatalf("decoded %+v %+v", env.EventsAPICallbackEvent, env.Mention)
				}
			}},
		{name: "message in a thread", body: string(envelope(fakeslack.MessageEvent(human("2.000200", "1.000100", "U1", "hi"), "channel"))),
			wantType: "event_callback", wantInner: "message", check: func(t *testing.T, env *Envelope) {
				if env.Message.ThreadTimeStamp != "1.000100" || env.Message.ChannelType != "channel" {
					t.Fatalf("decoded %+v", env.Message)
				}
			}},
		{name: "message_changed", body: string(envelope(fakeslack.Edited(human("2.000200", "1.000100", "U1", "hi"), "hi there", "channel"))),
			wantType: "event_callback", wantInner: "message", check: func(t *testing.T, env *Envelope) {
				if env.Message.SubType != "message_changed" || env.Message.Message.Text != "hi there" || env.Message.PreviousMessage.Text != "hi" || env.Message.Message.Edited == nil {
					t.Fatalf("decoded %+v", env.Message)
				}
			}},
		{name: "reaction_added", body: string(envelope(fakeslack.ReactionAdded("U1", "octagonal_sign", "C0001", "1.000100"))), wantType: "event_callback", wantInner: "reaction_added"},
		{name: "tokens_revoked", body: string(envelope(map[string]any{"type": "tokens_revoked", "tokens": map[string]any{"oauth": []string{}, "bot": []string{"U0BOT"}}})),
			wantType: "event_callback", wantInner: "tokens_revoked", check: func(t *testing.T, env *Envelope) {
				if len(env.Revoked.Tokens.Bot) != 1 {
					t.Fatalf("decoded %+v", env.Revoked)
				}
			}},
		{name: "unknown inner event", body: string(envelope(map[string]any{"type": "channel_created", "channel": map[string]any{"id": "C9"}})), wantType: "event_callback", wantInner: "channel_created"},
		{name: "app_rate_limited", body: `{"token":"x","type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}`, wantType: "app_rate_limited"},
		{name: "malformed", body: `{"type":"event_callback",`, wantErr: true},
		{name: "no event id", body: `{"type":"event_callback","team_id":"T1","event":{"type":"app_mention"}}`, wantErr: true},
		{name: "null event", body: `{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":null}`, wantErr: true},
		{name: "challenge missing", body: `{"type":"url_verification"}`, wantErr: true},
		{name: "inner event of the wrong shape", body: `{"type":"event_callback","team_id":"T1","event_id":"Ev1","event":{"type":"app_mention","user":7}}`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := Decode([]byte(tc.body))
			if tc.wantErr {
				if !errors.Is(err, core.ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if env.Type != tc.wantType || env.InnerType != tc.wantInner {
				t.Fatalf("type %q/%q", env.Type, env.InnerType)
			}
			if tc.check != nil {
				tc.check(t, env)
			}
		})
	}
}

// TestDecodeUpstreamPayloads decodes the payloads Slack and its SDKs
// publish (../shared/upstream/slack, read in place, never copied): the
// field-superset samples must decode without error into the types the
// rules read.
func TestDecodeUpstreamPayloads(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "upstream", "slack")
	for _, tc := range []struct{ file, inner string }{
		{"java-sdk-masked.AppMentionPayload.json", "app_mention"},
		{"java-sdk-masked.MessagePayload.json", "message"},
		{"slack-go.security_test.validBody.signed.json", "app_mention"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, tc.file))
			if err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("upstream samples not available (CI has ../shared beside the clone): %v", err)
				}
				t.Skipf("upstream samples not available: %v", err)
			}
			// The masked samples leave type and ids empty; fill what every
			// real delivery carries.
			var m map[string]any
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			m["type"] = "event_callback"
			if m["event_id"] == "" {
				m["event_id"] = "Ev1"
			}
			if m["team_id"] == "" {
				m["team_id"] = "T1"
			}
			ev := m["event"].(map[string]any)
			ev["type"] = tc.inner
			body, _ := json.Marshal(m)
			env, err := Decode(body)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if env.InnerType != tc.inner || (env.Mention == nil && env.Message == nil) {
				t.Fatalf("decoded %+v", env)
			}
			_ = decide(env, identity{botUserID: "U0BOT"})
		})
	}
	t.Run("docs.url_verification.json", func(t *testing.T) {
		raw, err := os.ReadFile(filepath.Join(dir, "docs.url_verification.json"))
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("upstream samples not available (CI has ../shared beside the clone): %v", err)
			}
			t.Skipf("upstream samples not available: %v", err)
		}
		env, err := Decode(raw)
		if err != nil || env.Challenge == "" {
			t.Fatalf("decode: %+v %v", env, err)
		}
	})
}
