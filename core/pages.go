package core

// EachItem pages through a list in id order (list answers the page after
// an id, and whether more follow) and calls fn with each item until fn
// says to stop or the list ends.
func EachItem[T any](list func(after string) (page []T, more bool, err error), id func(T) string, fn func(T) (next bool)) error {
	after := ""
	for {
		page, more, err := list(after)
		if err != nil {
			return err
		}
		for _, it := range page {
			if !fn(it) {
				return nil
			}
		}
		if !more || len(page) == 0 {
			return nil
		}
		after = id(page[len(page)-1])
	}
}
