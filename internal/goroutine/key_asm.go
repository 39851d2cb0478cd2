//go:build amd64 || arm64

package goroutine

// Fast reports whether Key reads the runtime's g directly (amd64, arm64)
// rather than parsing runtime.Stack.
const Fast = true

// Key returns the address of the running goroutine's g: nonzero, aligned
// to 8 bytes, and different from every other running goroutine's.
//
//go:nosplit
func Key() uintptr
