//go:build !amd64 && !arm64

package goroutine

// Fast reports whether Key reads the runtime's g directly (amd64, arm64)
// rather than parsing runtime.Stack.
const Fast = false

// Key returns the running goroutine's id shifted left by 3 (stackKey):
// nonzero, aligned to 8, different from every other goroutine's, and never
// reused.
func Key() uintptr { return stackKey() }
