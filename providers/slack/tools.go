package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/core"
)

// toolScope is what a session's tools act on: its installation and thread.
type toolScope struct {
	p       *Provider
	tenant  string
	channel string
	thread  string
}

// ToolServer is the session's in-process MCP server, its tools offered as
// mcp_slack_<tool>: post_message, add_reaction, read_thread, get_user and,
// when the installation holds a user token with search:read,
// search_messages. The server is kept per session (the MCP bridge keys
// its connection on the pointer).
func (p *Provider) ToolServer(ctx context.Context, s *core.Session) (*server.MCPServer, error) {
	if s.Origin == nil || s.Origin.Provider != Name {
		return nil, nil
	}
	_, channel, thread, err := parseKey(s.Origin.Key)
	if err != nil {
		return nil, nil
	}
	in, err := p.sessionInstallation(ctx, s)
	if err != nil || !in.HasToken {
		return nil, nil // uninstalled: no platform tools
	}
	search := strings.Contains(","+in.Metadata["user_scopes"]+",", ",search:read,")
	return p.tools.Get(s.ID, toolKey{in.ID, search}, func() *server.MCPServer {
		return (&toolScope{p: p, tenant: s.Origin.TenantID, channel: channel, thread: thread}).server(search)
	}), nil
}

func (sc *toolScope) server(search bool) *server.MCPServer {
	s := server.NewMCPServer("slack", "1", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("post_message",
		mcp.WithDescription("Post a message to Slack, in this conversation's thread unless another channel or thread is given. Markdown is converted to Slack formatting. Your final answer is posted for you: use this for extra messages."),
		mcp.WithString("text", mcp.Required(), mcp.Description("The message, in Markdown.")),
		mcp.WithString("channel", mcp.Description("A channel id (default: this conversation's channel).")),
		mcp.WithString("thread_ts", mcp.Description(`The thread to post in (default: this thread when the channel is this one; "" for a new top-level message).`)),
	), sc.postMessage)
	s.AddTool(mcp.NewTool("add_reaction",
		mcp.WithDescription("Add an emoji reaction to a Slack message (default: this thread's first message)."),
		mcp.WithString("name", mcp.Required(), mcp.Description("The emoji name, without colons, e.g. white_check_mark.")),
		mcp.WithString("channel", mcp.Description("The message's channel id (default: this conversation's).")),
		mcp.WithString("ts", mcp.Description("The message's ts (default: this thread's first message).")),
	), sc.addReaction)
	s.AddTool(mcp.NewTool("read_thread",
		mcp.WithDescription("Read this conversation's Slack thread: the messages with their authors and timestamps, oldest first."),
		mcp.WithNumber("limit", mcp.Description("How many messages at most (default 50).")),
	), sc.readThread)
	s.AddTool(mcp.NewTool("get_user",
		mcp.WithDescription("Look up a Slack user by id (the U… in <@U…>): name, real name, title, time zone."),
		mcp.WithString("user", mcp.Required(), mcp.Description("The user id.")),
	), sc.getUser)
	if search {
		s.AddTool(mcp.NewTool("search_messages",
			mcp.WithDescription("Search the workspace's Slack messages (Slack search syntax: in:#channel, from:@user, before:…)."),
			mcp.WithString("query", mcp.Required(), mcp.Description("The search query.")),
			mcp.WithNumber("count", mcp.Description("How many results (default 10, at most 50).")),
		), sc.search)
	}
	return s
}

// api is a client for the scope's installation, with a fresh token.
func (sc *toolScope) api(ctx context.Context) (*api, *core.Installation, error) {
	in, err := sc.p.installation(ctx, sc.tenant)
	if err != nil {
		return nil, nil, err
	}
	a, err := sc.p.client(ctx, in)
	return a, in, err
}

func toolError(err error) *mcp.CallToolResult {
	if e := slackError(err); e != "" {
		return mcp.NewToolResultError("slack answered: " + e)
	}
	return mcp.NewToolResultError(err.Error())
}

func (sc *toolScope) postMessage(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil || strings.TrimSpace(text) == "" {
		return mcp.NewToolResultError(`"text" is required`), nil
	}
	a, in, err := sc.api(ctx)
	if err != nil {
		return toolError(err), nil
	}
	channel := req.GetString("channel", sc.channel)
	thread := sc.thread
	if channel != sc.channel {
		thread = ""
		if err := in.CheckPostChannel(channel); err != nil {
			return toolError(err), nil
		}
	}
	if args := req.GetArguments(); args["thread_ts"] != nil {
		thread = req.GetString("thread_ts", thread)
	}
	var posted []string
	for _, part := range replies(toMrkdwn(text)) {
		opts := outMsg{texts: part}.options()
		if thread != "" {
			opts = append(opts, slackapi.MsgOptionTS(thread))
		}
		ts, err := a.post(ctx, channel, opts...)
		if err != nil {
			return toolError(err), nil
		}
		posted = append(posted, ts)
	}
	return mcp.NewToolResultText(fmt.Sprintf("posted to %s (ts %s)", channel, strings.Join(posted, ", "))), nil
}

func (sc *toolScope) addReaction(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, err := req.RequireString("name")
	name = strings.Trim(name, ": ")
	if err != nil || name == "" {
		return mcp.NewToolResultError(`"name" is required`), nil
	}
	a, _, err := sc.api(ctx)
	if err != nil {
		return toolError(err), nil
	}
	channel, ts := req.GetString("channel", sc.channel), req.GetString("ts", sc.thread)
	if err := a.react(ctx, channel, ts, name); err != nil {
		return toolError(err), nil
	}
	return mcp.NewToolResultText("reacted :" + name + ":"), nil
}

func (sc *toolScope) readThread(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	limit := req.GetInt("limit", 50)
	limit = min(max(limit, 1), 200)
	a, in, err := sc.api(ctx)
	if err != nil {
		return toolError(err), nil
	}
	msgs, _, err := a.replies(ctx, slackapi.GetConversationRepliesParameters{ChannelID: sc.channel, Timestamp: sc.thread, Limit: limit})
	if err != nil {
		return toolError(err), nil
	}
	return mcp.NewToolResultText(transcript(msgs, in.Metadata["bot_user_id"], limit)), nil
}

// transcript renders messages one per line, the bot's own marked.
func transcript(msgs []slackapi.Message, botUserID string, limit int) string {
	var b strings.Builder
	n := 0
	for _, m := range msgs {
		if n == limit {
			break
		}
		who := "<@" + nonEmpty(m.User, m.BotID) + ">"
		if m.User != "" && m.User == botUserID {
			who = "you"
		}
		fmt.Fprintf(&b, "[%s] %s: %s\n", m.Timestamp, who, m.Text)
		n++
	}
	if n == 0 {
		return "(the thread is empty)"
	}
	return b.String()
}

func (sc *toolScope) getUser(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	id, err := req.RequireString("user")
	id = strings.Trim(id, "<@> ")
	if err != nil || id == "" {
		return mcp.NewToolResultError(`"user" is required`), nil
	}
	a, _, err := sc.api(ctx)
	if err != nil {
		return toolError(err), nil
	}
	var u *slackapi.User
	err = a.do(ctx, "users.info", func(ctx context.Context) error {
		var err error
		u, err = a.c.GetUserInfoContext(ctx, id)
		return err
	})
	if err != nil {
		return toolError(err), nil
	}
	out, _ := json.Marshal(map[string]any{"id": u.ID, "name": u.Name, "real_name": u.RealName, "display_name": u.Profile.DisplayName,
		"title": u.Profile.Title, "tz": u.TZ, "is_bot": u.IsBot, "deleted": u.Deleted})
	return mcp.NewToolResultText(string(out)), nil
}

func (sc *toolScope) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	q, err := req.RequireString("query")
	if err != nil || strings.TrimSpace(q) == "" {
		return mcp.NewToolResultError(`"query" is required`), nil
	}
	in, err := sc.p.installation(ctx, sc.tenant)
	if err != nil {
		return toolError(err), nil
	}
	a, err := sc.p.userClient(ctx, in)
	if err != nil || a == nil {
		return mcp.NewToolResultError("search needs a user token with search:read, which this installation does not have"), nil
	}
	params := slackapi.NewSearchParameters()
	params.Count = min(max(req.GetInt("count", 10), 1), 50)
	var res *slackapi.SearchMessages
	err = a.do(ctx, "search.messages", func(ctx context.Context) error {
		var err error
		res, err = a.c.SearchMessagesContext(ctx, q, params)
		return err
	})
	if err != nil {
		return toolError(err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d results\n", res.Total)
	for _, m := range res.Matches {
		fmt.Fprintf(&b, "[%s %s] <@%s>: %s (%s)\n", m.Channel.ID, m.Timestamp, m.User, m.Text, m.Permalink)
	}
	return mcp.NewToolResultText(b.String()), nil
}

// toolKey is what a session's tool server was built for: its
// installation, and whether search is offered.
type toolKey struct {
	installation string
	search       bool
}
