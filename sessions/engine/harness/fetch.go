package harness

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboardhq/switchboard/core"
)

// Fetch downloads the pending attachments of the user.messages of events
// (intake records where a platform keeps a message's files and downloads
// nothing, so that a webhook's answer waits for no download) and logs a
// session.attachments_fetched for each such message, in turn turnID: the
// messages' files are downloaded once, by the first turn that reads
// them, before the model sees them. It returns the events it logged.
// Without a Fetcher the attachments stay pending, and the model is told
// they are not available. ctx bounds the downloads; wctx the log writes.
func (at *Attachments) Fetch(ctx, wctx context.Context, c *Cycle, turnID string, events []core.Event) ([]core.Event, error) {
	if at == nil || at.Fetcher == nil {
		return nil, nil
	}
	fetched, err := core.FetchedAttachments(events)
	if err != nil {
		return nil, err
	}
	var logged []core.Event
	for _, e := range events {
		if e.Type != core.TypeUserMessage {
			continue
		}
		if _, done := fetched[e.Seq]; done {
			continue
		}
		var b core.MessageBody
		if err := e.Decode(&b); err != nil {
			return logged, err
		}
		if !slices.ContainsFunc(b.Attachments, core.Attachment.Pending) {
			continue
		}
		got, err := at.Fetcher.FetchAttachments(ctx, b.Attachments)
		if err != nil {
			return logged, fmt.Errorf("fetch the attachments of %s: %w", e.ID, err)
		}
		ev := core.NewEvent(core.TypeAttachmentsFetched, core.LevelInternal, core.ActorSystem, core.AttachmentsFetchedBody{Seq: e.Seq, Attachments: got})
		out, err := c.Log.Append(wctx, c.SessionID, core.AppendRequest{Epoch: c.Epoch, TurnID: turnID, Events: []core.Event{ev}})
		if err != nil {
			return logged, fmt.Errorf("log fetched attachments: %w", err)
		}
		logged = append(logged, out...)
	}
	return logged, nil
}
