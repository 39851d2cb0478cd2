package main

import "errors"

// cProbes builds the C probe benchmark (hmbtrace's C shim against
// libotf2's event writer, same clock), and returns its path.
func cProbes(o *options) (string, error) {
	return "", errors.New("the C shim's benchmark is not part of this build yet")
}

// runCProbes runs it once: ns/event per subject.
func runCProbes(path string, quick bool) (map[string]float64, error) {
	return nil, errors.New("not built")
}
