package record

import "github.com/switchboardhq/switchboard/core"

// NewAttachment is a, about to be stored with data: a new id, and its
// size as stored.
func NewAttachment(a core.Attachment, data []byte) core.Attachment {
	a.ID, a.Size = core.NewID(core.PrefixAttachment), int64(len(data))
	return a
}
