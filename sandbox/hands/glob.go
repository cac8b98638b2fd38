package hands

import (
	"fmt"
	"regexp"
	"strings"
)

// compileGlob turns a glob into a matcher of slash-separated relative
// paths: * and ? stay within a segment, ** spans segments ("**/" also
// matches no directory at all), [..] is a class ([!..] negated) and {a,b}
// alternatives.
func compileGlob(pattern string) (func(string) bool, error) {
	if pattern == "" {
		return nil, fmt.Errorf("pattern is required")
	}
	var re strings.Builder
	re.WriteString("^")
	depth := 0
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '*':
			if i+1 < len(pattern) && pattern[i+1] == '*' {
				atStart := i == 0 || pattern[i-1] == '/'
				i++
				switch {
				case atStart && i+1 < len(pattern) && pattern[i+1] == '/':
					re.WriteString("(?:.*/)?")
					i++
				default:
					re.WriteString(".*")
				}
				continue
			}
			re.WriteString("[^/]*")
		case '?':
			re.WriteString("[^/]")
		case '[':
			end := strings.IndexByte(pattern[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("pattern %q: [ without ]", pattern)
			}
			class := pattern[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			re.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case '{':
			depth++
			re.WriteString("(?:")
		case '}':
			if depth == 0 {
				return nil, fmt.Errorf("pattern %q: } without {", pattern)
			}
			depth--
			re.WriteString(")")
		case ',':
			if depth > 0 {
				re.WriteString("|")
			} else {
				re.WriteString(",")
			}
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("pattern %q: { without }", pattern)
	}
	re.WriteString("$")
	rx, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return rx.MatchString, nil
}
