package slack_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/fixtures/fakeslack"
	"github.com/switchboardhq/switchboard/providers"
	"github.com/switchboardhq/switchboard/providers/providertest"
	"github.com/switchboardhq/switchboard/providers/slack"
)

func TestConformance(t *testing.T) {
	providertest.Run(t, newConformance)
}

const (
	conformanceSecret  = "conformance-signing-secret"
	conformanceChannel = "C0CONF"
	conformancePerson  = "U0PERSON"
)

// conformance is Slack for the suite: one workspace in single-workspace
// mode (its bot token), the conversation one thread of a channel.
type conformance struct {
	fake *fakeslack.Server
	team fakeslack.Team
	bot  string // the bot token
	root string // the thread's first message, once there is one
}

func newConformance(t *testing.T) providertest.Platform {
	fake := fakeslack.Start(t)
	bot := fake.AddTeam(fakeslack.Team{ID: "T0CONF", Name: "Conformance"})
	team, _ := fake.Team("T0CONF")
	return &conformance{fake: fake, team: team, bot: bot}
}

func (c *conformance) Describe() providers.Platform { return slack.Module().Platform }

func (c *conformance) Build(d providers.Deps) (providers.Provider, error) {
	return slack.New(slack.Config{SigningSecret: conformanceSecret, BotToken: c.bot, APIURL: c.fake.APIURL(),
		Sessions: d.Store, Installations: d.Store, Sealer: d.Sealer, Intake: d.Intake, StatusEvery: time.Millisecond, Logger: d.Logger})
}

// Install: in single-workspace mode the provider records the workspace
// at start.
func (c *conformance) Install(*testing.T, providers.Deps) {}

func (c *conformance) Earlier(_ *testing.T, text string) { c.message(conformancePerson, text) }

// message stores a message in the thread (its first one when there is
// none yet).
func (c *conformance) message(user, text string) fakeslack.Message {
	m := c.fake.Human(c.team.ID, conformanceChannel, user, text, c.root)
	if c.root == "" {
		c.root = m.TS
	}
	return m
}

func (c *conformance) Mention(t *testing.T, delivery, text string) providertest.Webhook {
	m := c.message(conformancePerson, "<@"+c.team.BotUserID+"> "+text)
	return c.event(t, fakeslack.Event{Team: c.team, EventID: delivery, Inner: fakeslack.Mention(m)}.JSON())
}

// Redeliver is the message event Slack sends beside a mention's
// app_mention, under its own event id.
func (c *conformance) Redeliver(t *testing.T, w providertest.Webhook, delivery string) providertest.Webhook {
	var env map[string]any
	if err := json.Unmarshal(w.Body, &env); err != nil {
		t.Fatal(err)
	}
	inner := env["event"].(map[string]any)
	inner["type"], inner["channel_type"] = "message", "channel"
	env["event_id"] = delivery
	body, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return c.event(t, body)
}

func (c *conformance) Own(t *testing.T, delivery, text string) providertest.Webhook {
	m := c.message(c.team.BotUserID, text+" <@"+c.team.BotUserID+">")
	m.BotID = c.team.BotID
	return c.event(t, fakeslack.Event{Team: c.team, EventID: delivery, Inner: fakeslack.MessageEvent(m, "channel")}.JSON())
}

// Stop is :octagonal_sign: on the thread's first message.
func (c *conformance) Stop(t *testing.T) providertest.Webhook {
	return c.event(t, fakeslack.Event{Team: c.team, Inner: fakeslack.ReactionAdded(conformancePerson, "octagonal_sign", conformanceChannel, c.root)}.JSON())
}

// Retry is the Retry button of the message saying the turn failed.
func (c *conformance) Retry(t *testing.T) providertest.Webhook { return c.click(t, "sb_retry") }

// Answer is the Allow or Deny button of the question about the call.
func (c *conformance) Answer(t *testing.T, result string) providertest.Webhook {
	return c.click(t, "sb_"+result)
}

// click waits for the bot's message with the button, and clicks it.
func (c *conformance) click(t *testing.T, actionID string) providertest.Webhook {
	t.Helper()
	var msg fakeslack.Message
	var value string
	c.fake.WaitFor(t, time.Minute, "a message with "+actionID, func() bool {
		for _, m := range c.botPosts() {
			if v, ok := buttonValue(m, actionID); ok {
				msg, value = m, v
				return true
			}
		}
		return false
	})
	payload := fakeslack.BlockAction(c.team, conformancePerson, msg, actionID, value)
	return providertest.FromRequest(t, fakeslack.SignedRequest("/webhooks/slack/interactivity", conformanceSecret, time.Now(),
		"application/x-www-form-urlencoded", fakeslack.InteractionBody(payload)))
}

// buttonValue is the value of the button actionID on m.
func buttonValue(m fakeslack.Message, actionID string) (string, bool) {
	var blocks []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
		} `json:"elements"`
	}
	if json.Unmarshal(m.Blocks, &blocks) != nil {
		return "", false
	}
	for _, b := range blocks {
		for _, e := range b.Elements {
			if e.ActionID == actionID {
				return e.Value, true
			}
		}
	}
	return "", false
}

func (c *conformance) event(t *testing.T, body []byte) providertest.Webhook {
	return providertest.FromRequest(t, fakeslack.SignedRequest("/webhooks/slack", conformanceSecret, time.Now(), "application/json", body))
}

func (c *conformance) botPosts() []fakeslack.Message {
	var out []fakeslack.Message
	for _, m := range c.fake.Thread(conformanceChannel, c.root) {
		if m.User == c.team.BotUserID && m.BotID != "" {
			out = append(out, m)
		}
	}
	return out
}

// Posts are the bot's messages in the thread.
func (c *conformance) Posts(*testing.T) []string {
	var out []string
	for _, m := range c.botPosts() {
		out = append(out, m.Text)
	}
	return out
}

// Status is the thread's assistant status, as last set.
func (c *conformance) Status(*testing.T) []string {
	status := ""
	for _, call := range c.fake.Calls("assistant.threads.setStatus") {
		if call.Error == "" && call.Str("channel_id") == conformanceChannel && call.Str("thread_ts") == c.root {
			status = call.Str("status")
		}
	}
	if status == "" {
		return nil
	}
	return []string{status}
}

func (c *conformance) WaitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	c.fake.WaitFor(t, d, what, cond)
}

func (c *conformance) Lacks(providertest.Ability) string { return "" }
