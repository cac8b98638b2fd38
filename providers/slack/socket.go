package slack

import (
	"context"
	"errors"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"github.com/switchboardhq/switchboard/core"
)

// Socket Mode: with an app-level token the gateway opens a WebSocket to
// Slack (apps.connections.open) and takes events and button clicks from
// it instead of from the events URL, so a laptop or a host behind a
// firewall needs no public address. The rules and the output are the
// events URL's. An envelope is acknowledged only once what it asks for is
// stored, so Slack sends an unacknowledged one again (a new envelope, the
// same event_id), which the dedupe keys of the event make a no-op. Each
// replica holds one connection (Slack allows ten per app and spreads the
// envelopes over them); slack-go's client reconnects when Slack asks to,
// or when the connection drops.

// socketLoop runs the connection until stop.
type socketLoop struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func (l *socketLoop) start(run func(ctx context.Context)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		run(ctx)
	}()
}

func (l *socketLoop) stop() {
	l.mu.Lock()
	cancel, done := l.cancel, l.done
	l.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// socketRetry is the wait before opening a connection again after
// slack-go gave up on one (it retries a drop itself).
const socketRetry = 5 * time.Second

// runSocket holds the Socket Mode connection and handles its envelopes
// until ctx ends.
func (p *Provider) runSocket(ctx context.Context) {
	api := slackapi.New(p.cfg.BotToken, slackapi.OptionAppLevelToken(p.cfg.AppToken), slackapi.OptionAPIURL(p.cfg.APIURL),
		slackapi.OptionHTTPClient(p.cfg.HTTPClient))
	client := socketmode.New(api)
	go func() {
		for ctx.Err() == nil {
			err := client.RunContext(ctx)
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("slack socket mode connection failed; opening another", "err", err, "in", socketRetry)
			select {
			case <-ctx.Done():
			case <-time.After(socketRetry):
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case evt := <-client.Events:
			p.onSocket(client, evt)
		}
	}
}

// onSocket handles one event of the connection. Envelopes are handled
// concurrently, each acknowledged once stored; one whose handling failed
// is left unacknowledged, for Slack to send again.
func (p *Provider) onSocket(client *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnected:
		p.log.Info("slack socket mode connected")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeInvalidAuth:
		p.log.Warn("slack socket mode", "event", evt.Type, "data", evt.Data)
	case socketmode.EventTypeDisconnect:
		p.log.Info("slack socket mode: Slack asked to reconnect")
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		req := evt.Request
		if req == nil {
			return
		}
		p.bg.Go(func(ctx context.Context) {
			if err := p.envelope(ctx, req); err != nil {
				p.log.Warn("slack socket mode envelope not acknowledged; Slack sends it again", "envelope_id", req.EnvelopeID, "type", req.Type, "err", err)
				return
			}
			if err := client.AckCtx(ctx, req.EnvelopeID, nil); err != nil {
				p.log.Warn("slack socket mode ack", "envelope_id", req.EnvelopeID, "err", err)
			}
		})
	}
}

// envelope stores what an envelope asks for. A payload that does not
// decode is acknowledged all the same: sending it again would not help.
func (p *Provider) envelope(ctx context.Context, req *socketmode.Request) error {
	var err error
	switch req.Type {
	case socketmode.RequestTypeEventsAPI:
		var env *Envelope
		if env, err = Decode(req.Payload); err == nil {
			log := p.log.With("event_id", env.EventID, "event_type", env.InnerType, "team_id", env.TeamID, "envelope_id", req.EnvelopeID)
			if req.RetryAttempt > 0 {
				log = log.With("retry", req.RetryAttempt, "retry_reason", req.RetryReason)
				env.Retry = true
			}
			err = p.handleCallback(ctx, env, log)
		}
	case socketmode.RequestTypeInteractive:
		err = p.interact(ctx, req.Payload)
	}
	if errors.Is(err, core.ErrInvalid) {
		p.log.Info("slack socket mode envelope ignored", "envelope_id", req.EnvelopeID, "err", err)
		return nil
	}
	return err
}
