//go:build !linux

package tempfile

const unnamedExpected = false
