//go:build !linux

package tempfile

import (
	"errors"
	"os"
)

var errNoUnnamed = errors.New("unnamed files need Linux")

// openUnnamed fails: Create then makes a named file.
func openUnnamed(dir string) (*os.File, error) { return nil, errNoUnnamed }

// linkUnnamed is never called: every file here has a name.
func linkUnnamed(f *os.File, path string) error { return errNoUnnamed }
