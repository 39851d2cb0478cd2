// Command prog is the test program of hmbtrace-go: plain Go, with no
// hmbtrace import, built with go build -toolexec=hmbtrace-go. It prints
// "name file:line" for the functions it runs, as the runtime names them,
// for the test to compare with the trace's regions.
package main

import (
	"fmt"
	"log"
	"os"
	"runtime"
	"sync"

	"example.com/prog/shapes"
)

// here prints the runtime's name of its caller and the line of that
// function's declaration, the line hmbtrace-go records.
func here(declLine int) {
	pc, file, _, _ := runtime.Caller(1)
	fmt.Printf("func %s %s:%d\n", runtime.FuncForPC(pc).Name(), file, declLine)
}

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func work(id int, out []float64) {
	here(31)
	s := shapes.Square{Side: float64(id + 1)}
	c := &shapes.Circle{R: float64(id)}
	out[id] = s.Area() + c.Area() + float64(fib(10))
}

func main() {
	here(38)
	out := make([]float64, 8)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 0 {
				here(44)
			}
			work(i, out)
		}()
	}
	wg.Wait()
	total := 0.0
	add := func(v float64) { total += v; runtime.Gosched() }
	for _, v := range out {
		add(v)
	}
	fmt.Printf("total %.1f\n", total)
	switch os.Getenv("PROG_EXIT") {
	case "exit":
		leave(3)
	case "fatal":
		log.Fatalf("fatal %d", 4)
	case "panic":
		boom()
	}
}

func leave(code int) {
	here(67)
	os.Exit(code)
}

func boom() {
	panic("boom") // line 75: the test looks for it in the traceback
}
