package mcpbridge

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxName is the longest tool name both model APIs accept.
const maxName = 64

// sanitize keeps a-z, A-Z, 0-9, _ and -, replacing anything else with _.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// shortHash names the original (server, tool) pair, so a shortened or
// disambiguated name stays the same from one cycle to the next and the
// model's history keeps pointing at the same tool.
func shortHash(server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	return hex.EncodeToString(sum[:4])
}

// toolName is mcp_<server>_<tool> as the model APIs accept it: sanitised,
// and cut to 64 characters with a hash suffix when longer.
func toolName(server, tool string) string {
	name := "mcp_" + sanitize(server) + "_" + sanitize(tool)
	if len(name) <= maxName {
		return name
	}
	suffix := "_" + shortHash(server, tool)
	return name[:maxName-len(suffix)] + suffix
}

// namer hands out unique names within one session's listing.
type namer struct{ taken map[string]bool }

// name returns the tool's name, or "" when no unique one can be made.
func (n *namer) name(server, tool string) string {
	if n.taken == nil {
		n.taken = map[string]bool{}
	}
	name := toolName(server, tool)
	if n.taken[name] {
		// Two tools sanitised to the same name ("a.b" and "a_b"): the later
		// one is told apart by its hash.
		suffix := "_" + shortHash(server, tool)
		if len(name)+len(suffix) > maxName {
			name = name[:maxName-len(suffix)]
		}
		name += suffix
	}
	if n.taken[name] {
		return ""
	}
	n.taken[name] = true
	return name
}
