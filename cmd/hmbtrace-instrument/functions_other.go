//go:build !linux

package main

import (
	"fmt"
	"runtime"
)

// programFunction is a function of a linked program, named as the
// measurement names its region.
type programFunction struct{ Name, File string }

// programFunctions reads ELF, which only Linux builds link here: main
// stops before any link elsewhere, so this only says why.
func programFunctions(string) ([]programFunction, error) {
	return nil, fmt.Errorf("the functions of a program are read on Linux only (this is %s)", runtime.GOOS)
}
