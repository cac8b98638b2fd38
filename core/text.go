package core

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CheckText refuses, as ErrInvalid naming field, text that names or finds
// a record (an id, a key, a tenant, a filter value) when a store could not
// keep it as given: invalid UTF-8, or U+0000. PostgreSQL's text holds
// neither, and the bbolt store ends index keys with 0x00, so both stores
// refuse it alike. Free text (messages, metadata, tool input and output)
// needs no check: both stores keep it byte for byte in JSON bodies.
func CheckText(field, v string) error {
	switch {
	case !utf8.ValidString(v):
		return fmt.Errorf("%s %q: not valid UTF-8: %w", field, v, ErrInvalid)
	case strings.ContainsRune(v, 0):
		return fmt.Errorf("%s %q: holds U+0000 (NUL), which no key or name may: %w", field, v, ErrInvalid)
	}
	return nil
}

// Clip is s on one line (runs of white space made one space, other
// characters that do not print dropped), cut to n characters with "…":
// free text as a list's cell shows it. Text from platform users reaches a
// terminal this way, where an escape sequence would act.
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) || r == ' ' {
			return r
		}
		return -1
	}, s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
