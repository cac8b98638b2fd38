package gitlab

import "strings"

// zeroWidthSpace breaks a quick action's match without showing.
const zeroWidthSpace = "\u200b"

// noQuickActions neutralises GitLab quick actions in text the app posts
// (a note, a discussion reply, a merge request's description): GitLab
// runs a line beginning with "/" and a command (/merge, /approve, /close,
// /label ~x …) as the author of the note, here the app's user, so a line
// the model wrote or quoted would act with the app's rights. Outside
// fenced code blocks (which GitLab leaves alone, and where a reader
// copies text), every line whose first non-blank character is a "/"
// followed by a letter gets a zero-width space before the "/": it reads
// the same, and no longer starts with a command.
func noQuickActions(text string) string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]+" \t") == "" {
				fence = ""
			}
			continue
		}
		if f := openingFence(trimmed); f != "" {
			fence = f
			continue
		}
		if len(trimmed) > 1 && trimmed[0] == '/' && isLetter(trimmed[1]) {
			indent := line[:len(line)-len(trimmed)]
			lines[i] = indent + zeroWidthSpace + trimmed
		}
	}
	return strings.Join(lines, "\n")
}

// openingFence is the fence a line opens (three or more backticks or
// tildes), or "".
func openingFence(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
