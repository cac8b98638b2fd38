// Package memory serves what an agent remembers across sessions: the
// model's memory tool (SessionTools), whose files under /memories live in
// the agent's memory stores, partitioned by the session's tenant, and the
// admin endpoints /v1/memory_stores (Handler) that create stores and
// read, trace and revert their files.
package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/switchboardhq/switchboard/core"
)

// SessionTools offers the memory tool to sessions whose agent version
// names memory stores (a providers.SessionTools).
type SessionTools struct {
	Stores core.MemoryStores
	// Embedder, when set, embeds memory files as they are written, and
	// search ranks by meaning with the embeddings kept in Embeddings (the
	// store's); without it, or when it fails, search matches words.
	Embedder   Embedder
	Embeddings core.MemoryEmbeddings
	Logger     *slog.Logger
}

// mount is one of the agent's stores as the session sees it: under
// /memories itself when the agent has one store, else under
// /memories/<name>.
type mount struct {
	store     *core.MemoryStore
	partition string
	readOnly  bool
	dir       string // "" for the only store
}

// root is where the mount's files appear to the model.
func (m *mount) root() string {
	if m.dir == "" {
		return core.MemoryRoot
	}
	return core.MemoryRoot + "/" + m.dir
}

// show is the path the model sees for rel, a file or directory of m.
func (m *mount) show(rel string) string {
	if rel == "" {
		return m.root()
	}
	return m.root() + "/" + rel
}

// Tools returns the memory tool when the agent names memory stores. A
// store deleted since the agent version was saved is left out.
func (t *SessionTools) Tools(ctx context.Context, s *core.Session, a *core.Agent) ([]core.Tool, error) {
	if len(a.MemoryStores) == 0 {
		return nil, nil
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var mounts []*mount
	for _, ref := range a.MemoryStores {
		m, err := t.Stores.GetMemoryStore(ctx, ref.ID)
		if errors.Is(err, core.ErrNotFound) {
			log.Warn("agent names a memory store that no longer exists", "session_id", s.ID, "memory_store_id", ref.ID)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("memory store %s: %w", ref.ID, err)
		}
		partition := s.MemoryTenant()
		if m.Shared {
			partition = core.SharedPartition
		}
		mounts = append(mounts, &mount{store: m, partition: partition, readOnly: ref.Access == core.MemoryReadOnly, dir: m.Name})
	}
	if len(mounts) == 0 {
		return nil, nil
	}
	if len(mounts) == 1 {
		mounts[0].dir = ""
	}
	tl := &tool{stores: t.Stores, mounts: mounts, log: log}
	if t.Embedder != nil && t.Embeddings != nil {
		tl.sem = &semantic{embedder: t.Embedder, store: t.Embeddings, log: log}
	}
	return []core.Tool{tl}, nil
}

// tool is the memory tool of one session's cycle.
type tool struct {
	stores core.MemoryStores
	mounts []*mount
	sem    *semantic // nil: search matches words
	log    *slog.Logger
}

// input is every command's fields; each command reads its own.
type input struct {
	Command    string  `json:"command"`
	Path       string  `json:"path"`
	FileText   *string `json:"file_text"`
	OldStr     *string `json:"old_str"`
	NewStr     *string `json:"new_str"`
	InsertLine *int    `json:"insert_line"`
	InsertText *string `json:"insert_text"`
	OldPath    string  `json:"old_path"`
	NewPath    string  `json:"new_path"`
	ViewRange  []int   `json:"view_range"`
	Query      string  `json:"query"`
}

const description = `Your memory: text files under /memories that persist across sessions, so what you learn in one conversation is there in the next. Start a task by viewing /memories to recall what earlier sessions saved, and record what will help later (decisions, preferences, facts about the people and systems you work with, progress on long tasks) as you go. Keep files small and organized by topic; update or delete what is outdated.

Commands:
- view: a directory lists its files with sizes (2 levels deep); a file shows its lines numbered (view_range [start, end] shows part; end -1 is the last line).
- create: write file_text to path, replacing the file if it exists.
- str_replace: replace old_str, which must occur exactly once in the file, with new_str.
- insert: insert insert_text after line insert_line (0 inserts at the top).
- delete: delete a file, or a directory and every file in it.
- rename: move old_path to new_path (new_path must not exist).
- search: find files about query, best first, with their most relevant lines.

If an edit fails because another session changed the file, view it again and retry.`

// inputSchema is the command shape Anthropic's models are trained on for
// the memory tool, plus search.
var inputSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"command":{"type":"string","enum":["view","create","str_replace","insert","delete","rename","search"],"description":"The operation."},` +
	`"path":{"type":"string","description":"A file or directory under /memories (view, create, str_replace, insert, delete; narrows search)."},` +
	`"file_text":{"type":"string","description":"create: the file's whole content."},` +
	`"old_str":{"type":"string","description":"str_replace: the text to replace, exactly as in the file."},` +
	`"new_str":{"type":"string","description":"str_replace: the text to put in its place."},` +
	`"insert_line":{"type":"integer","description":"insert: the line after which to insert (0: at the top)."},` +
	`"insert_text":{"type":"string","description":"insert: the text to insert."},` +
	`"old_path":{"type":"string","description":"rename: the file or directory to move."},` +
	`"new_path":{"type":"string","description":"rename: where to move it."},` +
	`"view_range":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2,"description":"view: [start, end] lines of a file, from 1; end -1 is the last line."},` +
	`"query":{"type":"string","description":"search: what to look for, in words or a phrase."}` +
	`},"required":["command"]}`)

func (t *tool) Def() core.ToolDef {
	return core.ToolDef{Name: "memory", Description: description, InputSchema: inputSchema}
}

// toolError is a mistake the model can fix; it becomes an error result.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func fail(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// Call runs one command. Mistakes and refusals are error results; a Go
// error means the store failed.
func (t *tool) Call(ctx context.Context, call core.ToolCall) (core.ToolResult, error) {
	var in input
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return core.ToolResult{Output: fmt.Sprintf("input must be a JSON object matching the tool's schema: %v", err), IsError: true}, nil
	}
	out, err := t.run(ctx, call, in)
	var te *toolError
	if errors.As(err, &te) {
		return core.ToolResult{Output: te.msg, IsError: true}, nil
	}
	if err != nil {
		return core.ToolResult{}, err
	}
	return core.ToolResult{Output: out}, nil
}

func (t *tool) run(ctx context.Context, call core.ToolCall, in input) (string, error) {
	switch in.Command {
	case "view":
		return t.view(ctx, in)
	case "create":
		return t.create(ctx, call, in)
	case "str_replace":
		return t.strReplace(ctx, call, in)
	case "insert":
		return t.insert(ctx, call, in)
	case "delete":
		return t.delete(ctx, call, in)
	case "rename":
		return t.rename(ctx, call, in)
	case "search":
		return t.search(ctx, in)
	case "":
		return "", fail("command is required: view, create, str_replace, insert, delete, rename or search")
	}
	return "", fail("unknown command %q: want view, create, str_replace, insert, delete, rename or search", in.Command)
}
