package editor

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/coder/acp-go-sdk"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/surfaces/client"
)

// Options configure the agent.
type Options struct {
	Gateway Gateway
	// URL is the gateway's address, for error messages.
	URL string
	// Agent is the agent session/new creates sessions of ("default" when
	// empty): editors have no way to choose one.
	Agent string
	// TokenSession, when set, names the one session the token reaches (a
	// session's client token or an attach token); session/list then shows
	// that session alone.
	TokenSession func() (id string, ok bool)
	// Describe says where a session began, for session/list ("Slack
	// T1/C1/1700000000.000100"); nil shows the origin key.
	Describe func(core.Origin) string
	Version  string
	Log      *slog.Logger
	// CancelWait bounds how long a cancelled prompt waits for the
	// gateway's word that the turn stopped before answering cancelled.
	CancelWait time.Duration
}

// Serve speaks ACP on in and out until the editor closes in or ctx ends.
func Serve(ctx context.Context, o Options, in io.Reader, out io.Writer) error {
	if o.Gateway == nil {
		return errors.New("editor: no gateway")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Agent == "" {
		o.Agent = "default"
	}
	if o.CancelWait == 0 {
		o.CancelWait = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &agent{o: o, ctx: ctx, sessions: map[string]*session{}, ready: make(chan struct{})}
	conn := acp.NewAgentSideConnection(a, out, in)
	conn.SetLogger(o.Log)
	a.conn = conn
	close(a.ready)
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	return nil
}

// peer is what the agent asks of the editor.
type peer interface {
	SessionUpdate(ctx context.Context, n acp.SessionNotification) error
	RequestPermission(ctx context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error)
}

// agent answers one editor's connection.
type agent struct {
	o   Options
	ctx context.Context // the connection's life
	// conn is set once the connection exists; ready closes then, since the
	// connection may call the agent before NewAgentSideConnection returns.
	conn  peer
	ready chan struct{}

	mu       sync.Mutex
	sessions map[string]*session
	client   string // the editor's name, from initialize
}

var _ acp.Agent = (*agent)(nil)
var _ acp.AgentLoader = (*agent)(nil)

func (a *agent) peer() peer {
	<-a.ready
	return a.conn
}

// Initialize states what the agent does: sessions load and list; prompts
// are text, as the API's user.message takes no images.
func (a *agent) Initialize(_ context.Context, p acp.InitializeRequest) (acp.InitializeResponse, error) {
	if p.ClientInfo != nil {
		a.mu.Lock()
		a.client = p.ClientInfo.Name
		a.mu.Unlock()
	}
	return acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:         true,
			SessionCapabilities: acp.SessionCapabilities{List: &acp.SessionListCapabilities{}},
		},
		AgentInfo:   &acp.Implementation{Name: "switchboard", Version: a.o.Version},
		AuthMethods: []acp.AuthMethod{},
	}, nil
}

// Authenticate is not needed: the token comes from the command line.
func (a *agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

// NewSession creates a gateway session of the default agent, recording
// the editor's working directory.
func (a *agent) NewSession(ctx context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	md := map[string]string{"cwd": p.Cwd}
	a.mu.Lock()
	if a.client != "" {
		md["editor"] = a.client
	}
	a.mu.Unlock()
	cs, err := a.o.Gateway.CreateSession(ctx, client.SessionParams{Agent: a.o.Agent, Metadata: md})
	if err != nil {
		return acp.NewSessionResponse{}, a.rpcError("new session of agent "+a.o.Agent, err)
	}
	s := a.open(cs.ID)
	s.notMCP(len(p.McpServers))
	s.follow(0)
	a.o.Log.Info("session created", "session", cs.ID, "agent", a.o.Agent, "cwd", p.Cwd)
	return acp.NewSessionResponse{SessionId: acp.SessionId(cs.ID)}, nil
}

// LoadSession replays a session's log and follows it live; a tool
// confirmation it waits on is asked at once.
func (a *agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	id := string(p.SessionId)
	what := "load session " + id
	if _, err := a.o.Gateway.GetSession(ctx, id); err != nil {
		return acp.LoadSessionResponse{}, a.rpcError(what, err)
	}
	s := a.open(id)
	s.notMCP(len(p.McpServers))
	last, err := s.replay(ctx)
	if err != nil {
		a.close(id, s)
		return acp.LoadSessionResponse{}, a.rpcError(what, err)
	}
	s.follow(last)
	v, err := a.o.Gateway.GetSession(ctx, id)
	if err == nil && v.PendingAction != nil && v.PendingAction.Budget == nil {
		s.askAll(v.PendingAction.ToolUseIDs)
	}
	a.o.Log.Info("session loaded", "session", id, "replayed_to", last)
	return acp.LoadSessionResponse{}, nil
}

// open starts the editor's view of session id, replacing one of before.
func (a *agent) open(id string) *session {
	s := newSession(a, id)
	a.mu.Lock()
	old := a.sessions[id]
	a.sessions[id] = s
	a.mu.Unlock()
	if old != nil {
		old.stop()
	}
	return s
}

func (a *agent) close(id string, s *session) {
	a.mu.Lock()
	if a.sessions[id] == s {
		delete(a.sessions, id)
	}
	a.mu.Unlock()
	s.stop()
}

func (a *agent) session(id acp.SessionId) (*session, error) {
	a.mu.Lock()
	s := a.sessions[string(id)]
	a.mu.Unlock()
	if s == nil {
		return nil, &acp.RequestError{Code: codeNotFound, Message: fmt.Sprintf("session %s is not open in this editor: load it (session/load) or create one (session/new)", id)}
	}
	return s, nil
}

// Prompt sends the prompt as a user.message and streams the session
// until the turn that takes it ends.
func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	s, err := a.session(p.SessionId)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	text, err := promptText(p.Prompt)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	key := "editor-" + fresh()
	if p.MessageId != nil && *p.MessageId != "" {
		key = "editor-" + s.id + "-" + *p.MessageId
	}
	stop, err := s.prompt(ctx, text, key)
	if err != nil {
		return acp.PromptResponse{}, err
	}
	a.o.Log.Info("prompt ended", "session", s.id, "stop_reason", string(stop))
	return acp.PromptResponse{StopReason: stop, UserMessageId: p.MessageId}, nil
}

// Cancel interrupts the running turn of the session's prompt.
func (a *agent) Cancel(_ context.Context, p acp.CancelNotification) error {
	s, err := a.session(p.SessionId)
	if err != nil {
		return nil // nothing of ours runs there
	}
	s.cancel()
	return nil
}

// ListSessions lists the caller's recent sessions, newest first, each
// titled with where it began.
func (a *agent) ListSessions(ctx context.Context, p acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	if a.o.TokenSession != nil {
		if id, ok := a.o.TokenSession(); ok {
			v, err := a.o.Gateway.GetSession(ctx, id)
			if err != nil {
				return acp.ListSessionsResponse{}, a.rpcError("list sessions", err)
			}
			return acp.ListSessionsResponse{Sessions: []acp.SessionInfo{a.info(*v)}}, nil
		}
	}
	f := client.SessionFilter{Limit: 50}
	if p.Cursor != nil {
		f.After = *p.Cursor
	}
	page, err := a.o.Gateway.ListSessions(ctx, f)
	if err != nil {
		return acp.ListSessionsResponse{}, a.rpcError("list sessions", err)
	}
	out := acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	for _, v := range page.Data {
		if v.Status == core.StatusArchived {
			continue
		}
		out.Sessions = append(out.Sessions, a.info(v))
	}
	if page.HasMore && len(page.Data) > 0 {
		next := page.Data[len(page.Data)-1].ID
		out.NextCursor = &next
	}
	return out, nil
}

// info is a session as session/list shows it: titled with where it began
// and what it last said.
func (a *agent) info(v client.SessionView) acp.SessionInfo {
	title := "API session"
	if v.Origin != nil {
		title = v.Origin.Key
		if a.o.Describe != nil {
			title = a.o.Describe(*v.Origin)
		}
	}
	if v.Result != nil && v.Result.Text != "" {
		title += ": " + firstLine(v.Result.Text, 80)
	}
	cwd := v.Metadata["cwd"]
	if cwd == "" {
		cwd = "/"
	}
	updated := v.UpdatedAt.UTC().Format(time.RFC3339Nano)
	meta := map[string]any{"status": string(v.Status)}
	if v.Origin != nil && v.Origin.URL != "" {
		meta["url"] = v.Origin.URL
	}
	return acp.SessionInfo{SessionId: acp.SessionId(v.ID), Cwd: cwd, Title: &title, UpdatedAt: &updated, Meta: meta}
}

// The session methods the gateway has no counterpart of.

func (a *agent) CloseSession(_ context.Context, p acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	if s, err := a.session(p.SessionId); err == nil {
		a.close(s.id, s)
	}
	return acp.CloseSessionResponse{}, nil
}

func (a *agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}

func (a *agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetMode)
}

// promptText is the prompt as one message: text blocks as they are,
// links and embedded text resources as lines of text. Images and audio
// are refused: the API's user.message holds text.
func promptText(blocks []acp.ContentBlock) (string, error) {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, fmt.Sprintf("[%s](%s)", b.ResourceLink.Name, b.ResourceLink.Uri))
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("%s:\n%s", r.Uri, r.Text))
		default:
			return "", &acp.RequestError{Code: codeInvalidParams, Message: "switchboard takes text prompts only: a session's user.message holds text, not images or audio"}
		}
	}
	text := strings.Join(parts, "\n\n")
	if strings.TrimSpace(text) == "" {
		return "", &acp.RequestError{Code: codeInvalidParams, Message: "the prompt is empty"}
	}
	return text, nil
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// fresh is a random id for an idempotency key.
func fresh() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
