package core

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"strings"
)

// Agent is one immutable version of an agent's configuration. Updating an
// agent writes version N+1; sessions pin the version they were created with.
type Agent struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Version     int             `json:"version"`
	Model       string          `json:"model"`
	System      string          `json:"system"`
	Description string          `json:"description,omitempty"`
	Tools       []ToolSpec      `json:"tools,omitempty"`
	MCPServers  []MCPServerSpec `json:"mcp_servers,omitempty"`
	// Skills are pinned versions (resolved when the version is saved);
	// MemoryStores the stores the agent's memory tool reads and writes.
	Skills       []SkillRef       `json:"skills,omitempty"`
	MemoryStores []MemoryStoreRef `json:"memory_stores,omitempty"`
	Limits       Limits           `json:"limits"`
	Environment  string           `json:"environment,omitempty"`
	// Runtime says what drives the version's turns: the built-in loop
	// (absent: the zero value), or an ACP agent in the session's sandbox.
	Runtime AgentRuntime `json:"runtime,omitzero"`
	// RepositoryAccess lets the agent's sessions that came from elsewhere
	// work on repositories of a code host's installation.
	RepositoryAccess *RepositoryAccess `json:"repository_access,omitempty"`
	Metadata         map[string]string `json:"metadata,omitempty"`
	CreatedAt        Time              `json:"created_at"`
	UpdatedAt        Time              `json:"updated_at"`
}

// AgentRef names an agent version.
type AgentRef struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

// Limits bound one turn, and a session across its turns. Zero means "use
// the gateway default" (none, for the session budgets).
type Limits struct {
	MaxSteps    int   `json:"max_steps,omitempty"`    // model calls per turn
	TurnSeconds int   `json:"turn_seconds,omitempty"` // wall seconds per turn
	MaxTokens   int64 `json:"max_tokens,omitempty"`   // input+output tokens per turn
	// MaxSessionTokens and MaxSessionCostUSD are the session's budgets,
	// across its turns: reaching one pauses the turn until it is raised
	// (BudgetPause). A model without a price never reaches the cost one.
	MaxSessionTokens  int64   `json:"max_session_tokens,omitempty"`
	MaxSessionCostUSD float64 `json:"max_session_cost_usd,omitempty"`
	// MaxTurns caps the turns a session runs, retries included: the input
	// after the last one waits, its turn paused with reason max_turns,
	// until the cap is raised (OverTurns).
	MaxTurns int `json:"max_turns,omitempty"`
}

// Validate refuses negative limits, naming the field.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		neg  bool
	}{
		{"max_steps", l.MaxSteps < 0}, {"turn_seconds", l.TurnSeconds < 0}, {"max_tokens", l.MaxTokens < 0},
		{"max_session_tokens", l.MaxSessionTokens < 0}, {"max_turns", l.MaxTurns < 0},
		{"max_session_cost_usd", l.MaxSessionCostUSD < 0 || math.IsNaN(l.MaxSessionCostUSD) || math.IsInf(l.MaxSessionCostUSD, 0)},
	} {
		if f.neg {
			return fmt.Errorf("limit %s must be a number not below 0: %w", f.name, ErrInvalid)
		}
	}
	return nil
}

// Or fills the zero fields of l from def.
func (l Limits) Or(def Limits) Limits {
	if l.MaxSteps <= 0 {
		l.MaxSteps = def.MaxSteps
	}
	if l.TurnSeconds <= 0 {
		l.TurnSeconds = def.TurnSeconds
	}
	if l.MaxTokens <= 0 {
		l.MaxTokens = def.MaxTokens
	}
	if l.MaxSessionTokens <= 0 {
		l.MaxSessionTokens = def.MaxSessionTokens
	}
	if l.MaxSessionCostUSD <= 0 {
		l.MaxSessionCostUSD = def.MaxSessionCostUSD
	}
	if l.MaxTurns <= 0 {
		l.MaxTurns = def.MaxTurns
	}
	return l
}

// ToolSpec declares a tool on an agent beyond the built-in ones.
type ToolSpec struct {
	Type        string          `json:"type"` // "custom"
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Policy      string          `json:"policy,omitempty"` // always_allow | always_ask | deny
}

// MCP transports.
const (
	TransportStreamableHTTP = "streamable_http"
	TransportSSE            = "sse"
	TransportStdio          = "stdio"
)

// MCPServerSpec names an external MCP server whose tools the agent is
// offered as mcp_<name>_<tool>.
type MCPServerSpec struct {
	Name      string `json:"name"`
	Transport string `json:"transport,omitempty"` // default streamable_http
	URL       string `json:"url,omitempty"`       // streamable_http, sse
	// Command and Args start a stdio server; Env holds its non-secret
	// environment.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Auth    *MCPAuth          `json:"auth,omitempty"`
	// Policy applies to every tool of the server; ToolPolicies overrides it
	// per tool (by the server's own tool name).
	Policy       string            `json:"policy,omitempty"`
	ToolPolicies map[string]string `json:"tool_policies,omitempty"`
}

// MCPAuth says which vault credential authenticates the gateway to an MCP
// server. Over HTTP it is sent as a header to the server's host (which the
// credential must be bound to); a stdio server gets it in the environment
// variable Env.
type MCPAuth struct {
	VaultCredential string `json:"vault_credential"`
	Env             string `json:"env,omitempty"`
}

// SplitModel splits "anthropic/claude-x" into provider and model name.
func SplitModel(model string) (provider, name string, err error) {
	provider, name, ok := strings.Cut(model, "/")
	if !ok || name == "" {
		return "", "", fmt.Errorf("model %q: want anthropic/<model> or openai/<model>: %w", model, ErrInvalid)
	}
	switch provider {
	case "anthropic", "openai":
		return provider, name, nil
	}
	return "", "", fmt.Errorf("model %q: unknown provider %q (want anthropic or openai): %w", model, provider, ErrInvalid)
}

// agentNamePattern is the rule for agent names: they are keys in the
// store, path segments in the API and words in chat, so no control or
// direction characters, no slashes, nothing longer than 64.
var agentNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ValidAgentName reports whether name may name an agent.
func ValidAgentName(name string) error {
	if name == "" {
		return fmt.Errorf("field \"name\" is required: %w", ErrInvalid)
	}
	if !agentNamePattern.MatchString(name) {
		shown := name
		if len(shown) > 80 {
			shown = shown[:80] + "…"
		}
		return fmt.Errorf("field \"name\" (%q, %d bytes) must match %s: %w", shown, len(name), agentNamePattern, ErrInvalid)
	}
	return nil
}

// Validate checks what a store must refuse to save as a new agent.
func (a *Agent) Validate() error {
	if err := ValidAgentName(a.Name); err != nil {
		return err
	}
	return a.validateFields()
}

// ValidateUpdate checks a next version of an agent whose latest version is
// named prevName. A name stored before names had a rule may stay, so such
// an agent can still be updated; a new name must follow the rule.
func (a *Agent) ValidateUpdate(prevName string) error {
	if a.Name != prevName {
		if err := ValidAgentName(a.Name); err != nil {
			return err
		}
	}
	return a.validateFields()
}

// validateFields checks everything but the name.
func (a *Agent) validateFields() error {
	if err := a.Runtime.Validate(); err != nil {
		return err
	}
	// An ACP agent picks its own model; one named here prices its turns.
	if a.Model == "" && a.Runtime.KindOrDefault() == RuntimeBuiltin {
		return fmt.Errorf("field \"model\" is required for the %s runtime (anthropic/<model> or openai/<model>): %w", RuntimeBuiltin, ErrInvalid)
	}
	if a.Model != "" {
		if _, _, err := SplitModel(a.Model); err != nil {
			return err
		}
	}
	if l := a.Limits; a.Runtime.Kind == RuntimeACP && a.Runtime.ModelCredential == "" && (l.MaxTokens > 0 || l.MaxSessionTokens > 0 || l.MaxSessionCostUSD > 0) {
		// Fail closed: a budget nobody can count is no budget.
		return fmt.Errorf("field \"limits\": an ACP agent's tokens are counted at the egress proxy, on the calls it injects the agent's model key into: set runtime.model_credential to budget them: %w", ErrInvalid)
	}
	if a.Runtime.Kind == RuntimeACP && len(a.Tools) > 0 {
		return fmt.Errorf("field \"tools\": custom tools are offered by the %s runtime only; an ACP agent brings its own: %w", RuntimeBuiltin, ErrInvalid)
	}
	if err := a.Limits.Validate(); err != nil {
		return err
	}
	if err := a.RepositoryAccess.Validate(); err != nil {
		return err
	}
	return a.validateTools()
}

var serverNamePattern = regexp.MustCompile(`^[a-zA-Z0-9-]{1,32}$`)

// validateTools rejects tool names the model APIs refuse, names used
// twice, and names that would collide with built-in or MCP tools, so a
// broken agent fails at create or update, not mid-turn.
func (a *Agent) validateTools() error {
	taken := map[string]string{}
	for _, n := range ReservedToolNames() {
		taken[n] = "a built-in tool"
	}
	for i, t := range a.Tools {
		if t.Type != "custom" {
			return fmt.Errorf("tools[%d] (%q): type %q: want custom: %w", i, t.Name, t.Type, ErrInvalid)
		}
		if err := ValidToolName(t.Name); err != nil {
			return fmt.Errorf("tools[%d]: %w", i, err)
		}
		if strings.HasPrefix(t.Name, "mcp_") {
			return fmt.Errorf("tools[%d]: name %q: the mcp_ prefix is reserved for MCP server tools: %w", i, t.Name, ErrInvalid)
		}
		if what, dup := taken[t.Name]; dup {
			return fmt.Errorf("tools[%d]: name %q collides with %s: %w", i, t.Name, what, ErrInvalid)
		}
		taken[t.Name] = fmt.Sprintf("tools[%d]", i)
		if _, err := ParsePolicy(t.Policy); err != nil {
			return fmt.Errorf("tools[%d] (%q): %w", i, t.Name, err)
		}
		if len(t.InputSchema) > 0 && !json.Valid(t.InputSchema) {
			return fmt.Errorf("tools[%d] (%q): input_schema is not valid JSON: %w", i, t.Name, ErrInvalid)
		}
	}
	servers := map[string]int{}
	for i, s := range a.MCPServers {
		// No underscore: mcp_<server>_<tool> must split one way only.
		if !serverNamePattern.MatchString(s.Name) {
			return fmt.Errorf("mcp_servers[%d]: name %q: want 1 to 32 of a-z, A-Z, 0-9 and -: %w", i, s.Name, ErrInvalid)
		}
		if j, dup := servers[s.Name]; dup {
			return fmt.Errorf("mcp_servers[%d]: name %q is also mcp_servers[%d]: %w", i, s.Name, j, ErrInvalid)
		}
		servers[s.Name] = i
		if err := s.validate(); err != nil {
			return fmt.Errorf("mcp_servers[%d] (%q): %w", i, s.Name, err)
		}
	}
	return nil
}

func (s *MCPServerSpec) validate() error {
	if _, err := ParsePolicy(s.Policy); err != nil {
		return err
	}
	for tool, p := range s.ToolPolicies {
		if _, err := ParsePolicy(p); err != nil {
			return fmt.Errorf("tool_policies[%q]: %w", tool, err)
		}
	}
	switch s.Transport {
	case "", TransportStreamableHTTP, TransportSSE:
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q: want an http or https URL: %w", s.URL, ErrInvalid)
		}
		if s.Command != "" {
			return fmt.Errorf("command is only for the stdio transport: %w", ErrInvalid)
		}
	case TransportStdio:
		if s.Command == "" {
			return fmt.Errorf("the stdio transport needs a command: %w", ErrInvalid)
		}
		if s.URL != "" {
			return fmt.Errorf("url is not used by the stdio transport: %w", ErrInvalid)
		}
	default:
		return fmt.Errorf("transport %q: want streamable_http, sse or stdio: %w", s.Transport, ErrInvalid)
	}
	if s.Auth != nil {
		if s.Auth.VaultCredential == "" {
			return fmt.Errorf("auth needs vault_credential: %w", ErrInvalid)
		}
		if s.Transport == TransportStdio && s.Auth.Env == "" {
			return fmt.Errorf("auth of a stdio server needs env, the variable that carries the credential: %w", ErrInvalid)
		}
	}
	return nil
}
