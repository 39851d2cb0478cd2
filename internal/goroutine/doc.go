// Package goroutine tells the running goroutine apart from the others
// cheaply: Key returns a word that no other running goroutine has, for the
// measurement's table of which goroutine holds which lane.
//
// On amd64 and arm64 the key is the address of the runtime's g, the
// goroutine's descriptor, read from where the runtime keeps it (the TLS
// slot on amd64, register g on arm64) by a three-instruction assembly
// function: about a nanosecond. The runtime recycles the descriptors of
// goroutines that ended, so two goroutines that never ran at the same time
// may have the same key; callers must take a key to name a running
// goroutine only, never one that may have ended.
//
// On other architectures the key is the goroutine's id, parsed from the
// header of runtime.Stack: correct, never reused, but microseconds a call
// (7 µs on the machine of BenchmarkStackKey, against 4 ns for the g).
package goroutine
