package auto_test

import "github.com/hmbtrace/hmbtrace/measure/auto"

// What hmbtrace-go makes of
//
//	func solve(n int) int { ... }
//
// in package example.com/jacobi: a package-level site, and a deferred probe
// first thing in the body. The first probe of the program starts the
// measurement from the HMB_* environment; main.main's deferred auto.Close
// writes the trace.
var solveSite = auto.NewSite("example.com/jacobi.solve", "/home/u/jacobi/solve.go", 12)

func solve(n int) int {
	defer auto.Enter(solveSite).End()
	s := 0
	for i := range n {
		s += i
	}
	return s
}

func ExampleEnter() {
	defer auto.Close() // hmbtrace-go adds this to main.main
	solve(10)
}
