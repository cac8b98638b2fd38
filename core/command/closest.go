package command

// Closest is the name of known fewest edits away from name ("" when
// known is empty): the suggestion of a "did you mean" when a person
// mistypes a command, a variable or a resource's name.
func Closest(name string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		if d := edits(name, k); bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// Suggest is Closest when it is near enough to be what was meant (at
// most a third of its letters changed, and at least two allowed), else "".
func Suggest(name string, known []string) string {
	c := Closest(name, known)
	if c == "" || edits(name, c) > max(2, len(c)/3) {
		return ""
	}
	return c
}

// edits is the Levenshtein distance between a and b.
func edits(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
