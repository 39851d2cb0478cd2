// Command symtarget prints the addresses of two of its functions and its
// own /proc/self/maps, for the Symbolizer's tests: `go test` builds its
// test binaries without symbol tables, this program is built with them.
package main

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
)

//go:noinline
func target() int { return 42 }

func main() {
	for _, f := range []any{target, main} {
		pc := reflect.ValueOf(f).Pointer()
		fmt.Printf("func %s %x\n", runtime.FuncForPC(pc).Name(), pc)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("maps\n%s", maps)
}
