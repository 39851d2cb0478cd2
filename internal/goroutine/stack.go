package goroutine

import "runtime"

// stackKey returns the running goroutine's id shifted left by 3, so that,
// like the g's address on amd64 and arm64, it is nonzero with its low bits
// clear. It parses the header runtime.Stack writes, "goroutine 17 [":
// microseconds, and no allocation. Key is stackKey on the
// architectures without an assembly Key; it is built everywhere so that
// its tests run everywhere.
func stackKey() uintptr {
	var buf [64]byte
	return parse(buf[:runtime.Stack(buf[:], false)]) << 3
}

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
