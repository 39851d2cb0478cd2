package report

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// parallel calls work(i) for every i in [0, n) on GOMAXPROCS goroutines,
// the indices handed out in order, and returns when all calls have. work
// writes its result into slot i of a slice of the caller's: merged in
// index order afterwards, the results are the same as a sequential run's.
func parallel(n int, work func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			work(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				work(i)
			}
		}()
	}
	wg.Wait()
}
