package cshim_test

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/cshim"
)

// The functions of a program built with -g -finstrument-functions (or
// the GCC plugin), named as the measurement names their regions: what a
// filter's rules are matched against after a link. Not run here: go test's
// binaries have no symbol table.
func ExampleFunctions() {
	fns, err := cshim.Functions("./bt.x")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range fns {
		fmt.Println(f.Name, f.File) // randlc /src/randlc.f (gfortran's symbol randlc_)
	}
}
