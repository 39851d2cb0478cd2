// Package parallel runs the tools' work on several cores: the summary,
// the exporters and the analyses read the locations (or files) of a trace
// as independent tasks, and put the results together in the order of the
// tasks, so that their output is the same byte for byte whatever the number
// of workers. One worker is the sequential path: the tasks run one after the
// other on the caller's goroutine.
//
// Tasks are handed out in increasing index order. That is what makes the
// results deterministic: when a task fails, every task before it has been
// started and runs to its end, so the error reported is that of the lowest
// failing task, the one a sequential run stops at.
package parallel

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Env is the environment variable that chooses the number of workers of
// the tools when their -procs flag does not: a positive integer, 1 for the
// sequential path. Unset, the tools use GOMAXPROCS workers.
const Env = "HMB_TOOL_PROCS"

// Procs returns the number of workers to use: n if it is positive, else the
// value of HMB_TOOL_PROCS if set, else GOMAXPROCS. A malformed HMB_TOOL_PROCS
// is an error that names it, never a silent default.
func Procs(n int) (int, error) {
	if n > 0 {
		return n, nil
	}
	if n < 0 {
		return 0, fmt.Errorf("%d workers: want a positive number (1 reads sequentially)", n)
	}
	if v, ok := os.LookupEnv(Env); ok {
		p, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || p <= 0 {
			return 0, fmt.Errorf("%s=%q: want a positive number of workers (1 reads sequentially)", Env, v)
		}
		return p, nil
	}
	return runtime.GOMAXPROCS(0), nil
}

// Do runs task(i) for every i in [0, n) on up to procs goroutines and
// returns the error of the lowest index that failed. After a failure no
// task of a higher index is started. With procs <= 1, or a single task, it
// runs the tasks in order on the caller's goroutine and stops at the first
// error. A panic in a task is raised again on the caller's goroutine.
func Do(procs, n int, task func(i int) error) error {
	if procs <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			if err := task(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next    atomic.Int64
		stop    atomic.Int64 // the lowest failed index, n if none
		mu      sync.Mutex
		errs    = map[int]error{}
		wg      sync.WaitGroup
		panicky = newPanics()
	)
	stop.Store(int64(n))
	for w := 0; w < min(procs, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer panicky.recover()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || int64(i) > stop.Load() {
					return
				}
				if err := task(i); err != nil {
					mu.Lock()
					errs[i] = err
					mu.Unlock()
					for {
						s := stop.Load()
						if int64(i) >= s || stop.CompareAndSwap(s, int64(i)) {
							break
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	panicky.raise()
	if s := int(stop.Load()); s < n {
		return errs[s]
	}
	return nil
}

// Order lets a task of Do wait until every task before it has finished,
// for the rare work whose result depends on the order of the tasks: a
// definition made on first use, whose reference numbers must come out as a
// sequential run numbers them. Waiting is done under the caller's lock,
// which Wait releases while it waits, so the tasks before can take it.
type Order struct {
	cond *sync.Cond
	done []bool
	low  int // every task below low has finished
}

// NewOrder tracks n tasks; mu is the lock that guards the state the
// ordered work touches.
func NewOrder(n int, mu sync.Locker) *Order {
	return &Order{cond: sync.NewCond(mu), done: make([]bool, n)}
}

// Wait blocks until tasks 0..i-1 have finished. The caller holds the lock.
func (o *Order) Wait(i int) {
	for o.low < i {
		o.cond.Wait()
	}
}

// WaitFor blocks until tasks 0..i-1 have finished or ready reports true,
// which it asks under the lock each time a task finishes or Notify is
// called: a task that needs what an earlier task may make first waits
// only until it is made. The caller holds the lock.
func (o *Order) WaitFor(i int, ready func() bool) {
	for o.low < i && !ready() {
		o.cond.Wait()
	}
}

// Notify wakes the tasks in WaitFor to ask again. The caller holds the
// lock.
func (o *Order) Notify() { o.cond.Broadcast() }

// Finish marks task i finished, whether it succeeded or not. The caller
// holds the lock.
func (o *Order) Finish(i int) {
	o.done[i] = true
	for o.low < len(o.done) && o.done[o.low] {
		o.low++
	}
	o.cond.Broadcast()
}

// panics carries a worker's panic to the caller's goroutine.
type panics struct {
	mu    sync.Mutex
	first any
	stack []byte
}

func newPanics() *panics { return &panics{} }

func (p *panics) recover() {
	if v := recover(); v != nil {
		p.record(v)
	}
}

// record keeps the first panic and returns an error standing for it.
func (p *panics) record(v any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first == nil {
		p.first = v
		buf := make([]byte, 64<<10)
		p.stack = buf[:runtime.Stack(buf, false)]
	}
	return fmt.Errorf("parallel: a task panicked: %v", v)
}

func (p *panics) raise() {
	if p.first != nil {
		panic(fmt.Sprintf("%v\n\ngoroutine of the task:\n%s", p.first, p.stack))
	}
}
