package core

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Runtime kinds: what drives an agent's turns.
const (
	// RuntimeBuiltin is switchboard's own loop (sessions/engine/harness), the default.
	RuntimeBuiltin = "builtin"
	// RuntimeACP is an Agent Client Protocol agent run as a process in the
	// session's sandbox and driven over its stdin and stdout.
	RuntimeACP = "acp"
)

// Compaction choices of the built-in runtime.
const (
	CompactionAuto = "auto" // summarise a context that outgrows the model's window (the default)
	CompactionOff  = "off"  // never: a long session fails at the model's limit instead
)

// ACPToolKinds are the kinds an ACP agent declares of its tool calls; a
// runtime's permissions are keyed by them.
var ACPToolKinds = []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}

// acpAllowedKinds run without asking unless the agent's permissions say
// otherwise; every other kind asks.
var acpAllowedKinds = []string{"read", "search", "think"}

// AgentRuntime says what drives an agent version's turns. The zero value
// is the built-in loop, and an agent shows none.
type AgentRuntime struct {
	Kind string `json:"kind"`
	// Compaction is the built-in loop's choice: auto (default) or off.
	Compaction string `json:"compaction,omitempty"`
	// Command is the ACP agent's argv, run in the session's sandbox with
	// the workspace as its working directory.
	Command []string `json:"command,omitempty"`
	// Env is the ACP agent's non-secret environment; credentials are
	// named from vaults, never written here.
	Env map[string]string `json:"env,omitempty"`
	// Model, when set, is the model the ACP agent is asked to use, in the
	// agent's own naming.
	Model string `json:"model,omitempty"`
	// Permissions maps an ACP tool kind to the policy of the agent's
	// permission requests for it: always_allow, always_ask or deny. The
	// defaults allow read, search and think and ask for the rest.
	Permissions map[string]string `json:"permissions,omitempty"`
	// ModelCredential is the vault credential (vcr_…) of the ACP agent's
	// model key: the egress proxy injects it on the agent's calls to the
	// credential's hosts, which the agent then reaches, and reads the
	// usage of every response it relays there. The agent itself holds a
	// placeholder key only.
	ModelCredential string `json:"model_credential,omitempty"`
}

// MarshalJSON names the built-in kind when a runtime that leaves it
// unset is shown (its compaction set, say); an agent with the zero value
// shows no runtime.
func (r AgentRuntime) MarshalJSON() ([]byte, error) {
	type plain AgentRuntime
	if r.Kind == "" {
		r.Kind = RuntimeBuiltin
	}
	return json.Marshal(plain(r))
}

// KindOrDefault is the runtime's kind, the built-in one when unset.
func (r AgentRuntime) KindOrDefault() string {
	if r.Kind == "" {
		return RuntimeBuiltin
	}
	return r.Kind
}

// Compacts reports whether the built-in loop may compact the context.
func (r AgentRuntime) Compacts() bool {
	return r.Compaction != CompactionOff
}

// PermissionPolicy is the policy of a permission request for an ACP tool
// call of kind; an unknown or missing kind counts as "other".
func (r AgentRuntime) PermissionPolicy(kind string) Policy {
	if !slices.Contains(ACPToolKinds, kind) {
		kind = "other"
	}
	if p, ok := r.Permissions[kind]; ok {
		policy, err := ParsePolicy(p)
		if err == nil {
			return policy
		}
	}
	if slices.Contains(acpAllowedKinds, kind) {
		return PolicyAllow
	}
	return PolicyAsk
}

// Validate checks the runtime, naming the field at fault.
func (r AgentRuntime) Validate() error {
	switch r.Kind {
	case "", RuntimeBuiltin:
		if len(r.Command) > 0 || len(r.Env) > 0 || r.Model != "" || len(r.Permissions) > 0 || r.ModelCredential != "" {
			return fmt.Errorf("field \"runtime\": command, env, model, model_credential and permissions are for kind %q: %w", RuntimeACP, ErrInvalid)
		}
		switch r.Compaction {
		case "", CompactionAuto, CompactionOff:
		default:
			return fmt.Errorf("field \"runtime.compaction\": %q: want %s or %s: %w", r.Compaction, CompactionAuto, CompactionOff, ErrInvalid)
		}
		return nil
	case RuntimeACP:
	default:
		return fmt.Errorf("field \"runtime.kind\": %q: want %s or %s: %w", r.Kind, RuntimeBuiltin, RuntimeACP, ErrInvalid)
	}
	if r.Compaction != "" {
		return fmt.Errorf("field \"runtime.compaction\" is for kind %q: an ACP agent compacts its own context: %w", RuntimeBuiltin, ErrInvalid)
	}
	if len(r.Command) == 0 || strings.TrimSpace(r.Command[0]) == "" {
		return fmt.Errorf("field \"runtime.command\" is required for kind %q (the agent's argv, e.g. [\"claude-agent-acp\"]): %w", RuntimeACP, ErrInvalid)
	}
	for i, arg := range r.Command {
		if strings.ContainsRune(arg, 0) {
			return fmt.Errorf("field \"runtime.command[%d]\" holds a NUL byte: %w", i, ErrInvalid)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Env)) {
		if !envNamePattern.MatchString(name) {
			return fmt.Errorf("field \"runtime.env\": %q is not a variable name: %w", name, ErrInvalid)
		}
		if strings.ContainsRune(r.Env[name], 0) {
			return fmt.Errorf("field \"runtime.env\": %s holds a NUL byte: %w", name, ErrInvalid)
		}
	}
	if r.ModelCredential != "" && !HasPrefix(r.ModelCredential, PrefixCredential) {
		return fmt.Errorf("field \"runtime.model_credential\": %q is not a vault credential id (vcr_…): %w", r.ModelCredential, ErrInvalid)
	}
	for _, kind := range slices.Sorted(maps.Keys(r.Permissions)) {
		if !slices.Contains(ACPToolKinds, kind) {
			return fmt.Errorf("field \"runtime.permissions\": %q is not an ACP tool kind (want one of %s): %w", kind, strings.Join(ACPToolKinds, ", "), ErrInvalid)
		}
		if _, err := ParsePolicy(r.Permissions[kind]); err != nil {
			return fmt.Errorf("field \"runtime.permissions\": %s: %w", kind, err)
		}
	}
	return nil
}
