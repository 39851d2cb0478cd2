package main

import "github.com/hmbtrace/hmbtrace/cshim"

// programFunction is a function of a linked program, named as the
// measurement names its region.
type programFunction = cshim.Function

// programFunctions returns the functions the program at path defines
// (cshim.Functions reads its ELF symbols and DWARF).
func programFunctions(path string) ([]programFunction, error) {
	return cshim.Functions(path)
}
