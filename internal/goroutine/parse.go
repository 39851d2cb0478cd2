package goroutine

// parse returns the id in a stack trace's header, "goroutine 17 [...",
// 0 if it has none.
func parse(b []byte) uintptr {
	const prefix = "goroutine "
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return 0
	}
	var id uintptr
	for _, c := range b[len(prefix):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id
}
