// Package editor is switchboard as an Agent Client Protocol agent: the
// process an editor (Zed, a JetBrains IDE, Neovim) launches over stdio to
// open, follow and continue gateway sessions from the editor. It speaks to
// the gateway only over the public API (sessions/surfaces/client):
// session/new creates a session, session/load replays a session's log as
// session/update notifications and follows it live, session/prompt posts a
// user.message and streams the turn until it ends, a pending tool
// confirmation becomes session/request_permission, session/cancel an
// interrupt. Stdout carries protocol frames only; the process logs through
// the slog.Logger it is given.
package editor
