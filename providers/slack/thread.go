package slack

import (
	"context"
	"fmt"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
)

var _ core.ThreadOpener = (*Provider)(nil)

// OpenThread posts text as a new message of the bot in channel, once per
// key: a message posted under key in the last day (the key rides in its
// metadata) is found in the channel's history instead of posted again.
// The session it opens answers in that message's thread.
func (p *Provider) OpenThread(ctx context.Context, installationID, channel, text, key string) (core.Origin, string, error) {
	in, err := p.cfg.Installations.GetInstallation(ctx, installationID)
	if err != nil {
		return core.Origin{}, "", err
	}
	switch {
	case in.Provider != Name:
		return core.Origin{}, "", fmt.Errorf("installation %s is %s's, not Slack's: %w", in.ID, in.Provider, core.ErrInvalid)
	case !in.HasToken:
		return core.Origin{}, "", fmt.Errorf("installation %s has no token (uninstalled?): %w", in.ID, core.ErrInvalid)
	}
	a, err := p.client(ctx, in)
	if err != nil {
		return core.Origin{}, "", err
	}
	ts, found, err := a.findInChannel(ctx, channel, key)
	if err != nil {
		return core.Origin{}, "", classify(err)
	}
	if !found {
		ts, err = a.post(ctx, channel, slackapi.MsgOptionText(text, false),
			slackapi.MsgOptionMetadata(slackapi.SlackMetadata{EventType: metadataType, EventPayload: map[string]any{"key": key}}))
		if err != nil {
			return core.Origin{}, "", classify(err)
		}
	}
	team := in.Metadata["team_id"]
	if team == "" {
		team = in.ExternalID
	}
	return core.Origin{Provider: Name, Key: sessionKey(team, channel, ts), TenantID: in.ExternalID, URL: permalink(in, channel, ts)}, Name + ":" + team, nil
}

// findInChannel looks for the bot's message posted under key in the
// channel's last day.
func (a *api) findInChannel(ctx context.Context, channel, key string) (string, bool, error) {
	params := slackapi.GetConversationHistoryParameters{ChannelID: channel, IncludeAllMetadata: true, Limit: 200,
		Oldest: fmt.Sprintf("%d.000000", time.Now().Add(-24*time.Hour).Unix())}
	for range 10 {
		var resp *slackapi.GetConversationHistoryResponse
		err := a.do(ctx, "conversations.history", func(ctx context.Context) error {
			var err error
			resp, err = a.c.GetConversationHistoryContext(ctx, &params)
			return err
		})
		if err != nil {
			return "", false, err
		}
		for _, m := range resp.Messages {
			if m.Metadata.EventType == metadataType && fmt.Sprint(m.Metadata.EventPayload["key"]) == key {
				return m.Timestamp, true, nil
			}
		}
		if !resp.HasMore || resp.ResponseMetaData.NextCursor == "" {
			break
		}
		params.Cursor = resp.ResponseMetaData.NextCursor
	}
	return "", false, nil
}
