package core

import (
	"context"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// PrefixMemoryStore is the id prefix of memory stores.
const PrefixMemoryStore = "mem"

// MemoryStore holds text files an agent remembers across sessions. Its
// files are partitioned by tenant (a session's Tenant), so what one
// Slack workspace, repository or Linear organization wrote is not read
// from another, unless the store is Shared: then every session sees one
// partition.
type MemoryStore struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"` // unique among memory stores
	Description string            `json:"description,omitempty"`
	Shared      bool              `json:"shared"`
	Limits      MemoryLimits      `json:"limits"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	CreatedAt   Time              `json:"created_at"`
	UpdatedAt   Time              `json:"updated_at"`
}

// Validate checks what a store must refuse to save: a name as
// environments have them, and limits that are not negative.
func (m *MemoryStore) Validate() error {
	if err := validRecordName("memory store", m.Name, PrefixMemoryStore); err != nil {
		return err
	}
	// The name is a folder of /memories when an agent has several stores,
	// and a path segment of the API: the agents' rule.
	if !agentNamePattern.MatchString(m.Name) {
		return fmt.Errorf("memory store name %q: want 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit: %w", m.Name, ErrInvalid)
	}
	l := m.Limits
	if l.MaxFileBytes < 0 || l.MaxPartitionBytes < 0 || l.MaxVersions < 0 {
		return fmt.Errorf("memory store %q: limits must not be negative (0: the default): %w", m.Name, ErrInvalid)
	}
	return nil
}

// MemoryLimits bound a memory store. Zero fields take the defaults
// (DefaultMemoryLimits).
type MemoryLimits struct {
	// MaxFileBytes bounds one file's content.
	MaxFileBytes int `json:"max_file_bytes,omitempty"`
	// MaxPartitionBytes bounds one partition, counting every retained
	// version of every file. A write that would pass it first prunes
	// the partition's oldest versions that are not a file's latest; only
	// when latest versions alone would pass it is the write refused.
	MaxPartitionBytes int64 `json:"max_partition_bytes,omitempty"`
	// MaxVersions is how many versions a file keeps; older ones are
	// pruned, oldest first.
	MaxVersions int `json:"max_versions,omitempty"`
}

// DefaultMemoryLimits apply where a store's limits leave zero.
var DefaultMemoryLimits = MemoryLimits{MaxFileBytes: 100 << 10, MaxPartitionBytes: 10 << 20, MaxVersions: 100}

// Or fills the zero fields of l from def.
func (l MemoryLimits) Or(def MemoryLimits) MemoryLimits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = def.MaxFileBytes
	}
	if l.MaxPartitionBytes <= 0 {
		l.MaxPartitionBytes = def.MaxPartitionBytes
	}
	if l.MaxVersions <= 0 {
		l.MaxVersions = def.MaxVersions
	}
	return l
}

// Memory access of an agent to a store.
const (
	MemoryReadOnly  = "read_only"
	MemoryReadWrite = "read_write"
)

// MemoryStoreRef names a memory store on an agent and how the agent may
// use it (default read_write).
type MemoryStoreRef struct {
	ID     string `json:"id"`
	Access string `json:"access,omitempty"`
}

// SharedPartition is the partition of a shared store's files.
const SharedPartition = "*"

// DefaultTenant is the tenant of API sessions created without one.
const DefaultTenant = "api"

// Memory change operations.
const (
	MemoryOpWrite  = "write"  // create or replace a file
	MemoryOpDelete = "delete" // the file's latest version becomes a deletion
	MemoryOpRename = "rename" // a deletion at Path and a write at NewPath
	MemoryOpRevert = "revert" // a write of Version's content
)

// MemoryVersion is one version of a memory file: a write, or a deletion
// (Deleted). Content is left out of listings and histories.
type MemoryVersion struct {
	Store     string `json:"store_id"`
	Partition string `json:"tenant"`
	Path      string `json:"path"`
	Version   int    `json:"version"`
	Op        string `json:"op"` // the MemoryOp that wrote it
	Deleted   bool   `json:"deleted,omitempty"`
	Size      int    `json:"size"`
	Content   string `json:"content,omitempty"`
	// SessionID and TurnID say which session's turn wrote it; By says who
	// asked when no session did (an admin's revert).
	SessionID string `json:"session_id,omitempty"`
	TurnID    string `json:"turn_id,omitempty"`
	By        string `json:"by,omitempty"`
	CreatedAt Time   `json:"created_at"`
}

// MemoryChange is one change to a memory partition, made in one store
// transaction with its limit checks.
type MemoryChange struct {
	Store     string
	Partition string
	Op        string
	Path      string
	NewPath   string // rename
	Content   string // write
	Version   int    // revert: the version whose content is written again
	// IfVersion, when not nil, is the file's latest version the change
	// expects (0: the file must not exist or be deleted); another
	// makes the change fail with ErrConflict, so two sessions editing one
	// file never lose an edit.
	IfVersion *int
	SessionID string
	TurnID    string
	By        string
}

// MemoryRoot is where the memory tool's paths live.
const MemoryRoot = "/memories"

// ValidMemoryPath checks a path of a memory file as stored: relative to
// the partition's root, slash-separated and clean, no "..", no empty
// segment, no control characters, at most 512 bytes.
func ValidMemoryPath(p string) error {
	switch {
	case p == "" || p == ".":
		return fmt.Errorf("empty memory path: %w", ErrInvalid)
	case len(p) > 512:
		return fmt.Errorf("memory path of %d bytes: at most 512: %w", len(p), ErrInvalid)
	case !utf8.ValidString(p):
		return fmt.Errorf("memory path %q is not valid UTF-8: %w", p, ErrInvalid)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("memory path %q: want it relative to %s: %w", p, MemoryRoot, ErrInvalid)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return fmt.Errorf("memory path %q: control characters and backslashes are not allowed: %w", p, ErrInvalid)
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return fmt.Errorf("memory path %q: want a clean path without \".\" or \"..\": %w", p, ErrInvalid)
		}
	}
	if path.Clean(p) != p {
		return fmt.Errorf("memory path %q is not clean: %w", p, ErrInvalid)
	}
	return nil
}

// MemoryStores keeps memory stores and their files' versions.
type MemoryStores interface {
	// CreateMemoryStore saves a new store; names are unique (ErrConflict).
	CreateMemoryStore(ctx context.Context, m *MemoryStore) (*MemoryStore, error)
	GetMemoryStore(ctx context.Context, idOrName string) (*MemoryStore, error)
	ListMemoryStores(ctx context.Context, after string, limit int) ([]*MemoryStore, bool, error)
	// UpdateMemoryStore applies update and saves the store; identity and
	// created_at are kept.
	UpdateMemoryStore(ctx context.Context, idOrName string, update func(*MemoryStore) error) (*MemoryStore, error)
	// DeleteMemoryStore deletes the store and every file of it. It is
	// refused (ErrConflict, naming them) while an agent's latest version
	// names the store.
	DeleteMemoryStore(ctx context.Context, idOrName string) error
	// ChangeMemory makes one change and returns the versions it wrote.
	// A file over the store's MaxFileBytes, or a partition whose latest
	// versions would pass MaxPartitionBytes, is refused (ErrInvalid); a
	// missing file to change is ErrNotFound.
	ChangeMemory(ctx context.Context, c MemoryChange) ([]MemoryVersion, error)
	// MemoryFiles lists the latest versions of the partition's files that
	// are not deleted, by path, with their content when withContent is
	// set.
	MemoryFiles(ctx context.Context, store, partition string, withContent bool) ([]MemoryVersion, error)
	// MemoryFile returns a version of a file with its content; 0 is the
	// latest, which is ErrNotFound when deleted.
	MemoryFile(ctx context.Context, store, partition, path string, version int) (*MemoryVersion, error)
	// MemoryHistory lists a file's retained versions, newest first,
	// without content.
	MemoryHistory(ctx context.Context, store, partition, path string) ([]MemoryVersion, error)
	// MemoryPartitions lists the partitions that hold files of the store.
	MemoryPartitions(ctx context.Context, store string) ([]string, error)
}
