//go:build !linux

package tracefile

// moveNoReplace renames src to dst unless dst exists, by a hard link (which
// fails on an existing name) and an unlink.
func moveNoReplace(src, dst string) error { return linkNoReplace(src, dst) }

// lockDir does nothing here: see the Linux version.
func lockDir(dir string) (unlock func()) { return func() {} }
