// Package acpclient is the runtime of agents whose runtime is acp: the
// client side of the Agent Client Protocol (github.com/coder/acp-go-sdk).
// It starts the agent's command as a process in the session's sandbox
// (core.ProcessSandbox), speaks ACP over its stdin and stdout, sends one
// session/prompt per turn with the inputs the turn took, and logs every
// update as it arrives in the session's event vocabulary: message text
// coalesced per run as agent.message, thoughts as progress messages of
// kind thought, tool calls as agent.tool_use and agent.tool_result, plans
// as agent.plan, the stop reason as turn.completed. It serves what the
// agent asks of its client: permission requests become the session's
// confirmations (parked with a deadline while the turn waits), files and
// terminals act on the sandbox inside the workspace only.
//
// A panic in the gateway's side of a turn (a request of the agent's, a
// platform tool it calls, the prompt's call) is recovered where it
// happens and ends that turn with a retryable internal error; the
// agent's process goes with it.
//
// The log stays the one truth. The process lives while its sandbox is
// warm, across turns, and is ended at hibernation, archive, shutdown,
// lease loss, or when it outlives a cancel's grace period. A turn that
// finds no live process starts one and, per the agent's capabilities and
// the log (session.runtime_started), loads its ACP session of before or
// opens a new one told the log so far.
package acpclient
