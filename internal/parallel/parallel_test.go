package parallel

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestProcs(t *testing.T) {
	if n, err := Procs(3); n != 3 || err != nil {
		t.Errorf("Procs(3) = %d, %v", n, err)
	}
	if _, err := Procs(-1); err == nil {
		t.Error("Procs(-1): no error")
	}
	t.Setenv(Env, "5")
	if n, err := Procs(0); n != 5 || err != nil {
		t.Errorf("%s=5: %d, %v", Env, n, err)
	}
	if n, err := Procs(2); n != 2 || err != nil {
		t.Errorf("the flag wins over %s: %d, %v", Env, n, err)
	}
	for _, bad := range []string{"0", "-2", "two", ""} {
		t.Setenv(Env, bad)
		_, err := Procs(0)
		if err == nil || !strings.Contains(err.Error(), Env) {
			t.Errorf("%s=%q: error %v, want one naming %s", Env, bad, err, Env)
		}
	}
}

func TestProcsDefault(t *testing.T) {
	// Unset: GOMAXPROCS. t.Setenv restores the variable afterwards.
	t.Setenv(Env, "")
	if err := unsetenv(Env); err != nil {
		t.Fatal(err)
	}
	if n, err := Procs(0); n != runtime.GOMAXPROCS(0) || err != nil {
		t.Errorf("unset: %d, %v; want GOMAXPROCS %d", n, err, runtime.GOMAXPROCS(0))
	}
}

func TestDoRunsEveryTask(t *testing.T) {
	for _, procs := range []int{1, 2, 7} {
		const n = 100
		var seen [n]atomic.Int32
		if err := Do(procs, n, func(i int) error { seen[i].Add(1); return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Errorf("procs %d: task %d ran %d times", procs, i, c)
			}
		}
	}
}

// The error is that of the lowest failing task, as in a sequential run,
// even when a later task fails first.
func TestDoLowestError(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		release := make(chan struct{})
		err := Do(procs, 20, func(i int) error {
			switch i {
			case 3:
				if procs > 1 {
					<-release // fails after task 5 did
				}
				return fmt.Errorf("task %d", i)
			case 5:
				if procs > 1 {
					close(release)
				}
				return fmt.Errorf("task %d", i)
			}
			return nil
		})
		if err == nil || err.Error() != "task 3" {
			t.Errorf("procs %d: %v, want task 3", procs, err)
		}
	}
}

func TestDoStopsAfterError(t *testing.T) {
	var ran atomic.Int32
	err := Do(2, 1000, func(i int) error {
		ran.Add(1)
		if i == 0 {
			return errors.New("first")
		}
		return nil
	})
	if err == nil || err.Error() != "first" {
		t.Fatalf("err %v", err)
	}
	// Task 0 fails at once; the other worker may finish a few tasks, not
	// the thousand.
	if r := ran.Load(); r > 500 {
		t.Errorf("%d tasks ran after task 0 failed", r)
	}
}

func TestDoPanic(t *testing.T) {
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(fmt.Sprint(p), "boom") {
			t.Errorf("recovered %v, want the task's panic", p)
		}
	}()
	Do(2, 10, func(i int) error {
		if i == 4 {
			panic("boom")
		}
		return nil
	})
	t.Error("Do returned after a task panicked")
}

// Work done under Order.Wait happens in task order, whatever the workers.
func TestOrderWait(t *testing.T) {
	for _, procs := range []int{1, 2, 5} {
		var mu sync.Mutex
		o := NewOrder(40, &mu)
		var seq []int
		err := Do(procs, 40, func(i int) error {
			defer func() { mu.Lock(); o.Finish(i); mu.Unlock() }()
			if i%3 == 0 {
				mu.Lock()
				o.Wait(i)
				seq = append(seq, i)
				mu.Unlock()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k < len(seq); k++ {
			if seq[k] < seq[k-1] {
				t.Fatalf("procs %d: ordered work ran as %v", procs, seq)
			}
		}
		if len(seq) != 14 {
			t.Fatalf("procs %d: %d ordered steps, want 14", procs, len(seq))
		}
	}
}

func unsetenv(k string) error { return os.Unsetenv(k) }

func TestSpool(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, limit := range []int{0, 10, 1 << 20} {
		s := NewSpool(limit)
		var want []byte
		for i := 0; i < 1000; i++ {
			p := []byte(fmt.Sprintf("line %d\n", i))
			want = append(want, p...)
			if _, err := s.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		if s.Len() != int64(len(want)) {
			t.Errorf("limit %d: Len %d, want %d", limit, s.Len(), len(want))
		}
		var got strings.Builder
		if _, err := s.WriteTo(&got); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) {
			t.Errorf("limit %d: spool gave %d bytes, want %d", limit, got.Len(), len(want))
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) > 0 {
			t.Errorf("limit %d: %d files left in TMPDIR", limit, len(left))
		}
	}
}

// The tasks' outputs come out in task order, whatever the workers and
// however long each task takes, also through temporary files.
func TestStream(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, procs := range []int{1, 2, 3, 8} {
		for _, memory := range []int{0, 64, 1 << 20} {
			var out strings.Builder
			var want strings.Builder
			const n = 40
			for i := 0; i < n; i++ {
				for k := 0; k < i*7%23; k++ {
					fmt.Fprintf(&want, "task %d line %d\n", i, k)
				}
			}
			s := NewStream(&out, memory)
			err := Do(procs, n, func(i int) error {
				w := s.Writer(i)
				for k := 0; k < i*7%23; k++ {
					if k%5 == 0 {
						runtime.Gosched()
					}
					if _, err := fmt.Fprintf(w, "task %d line %d\n", i, k); err != nil {
						return err
					}
				}
				return w.Finish(false)
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != want.String() {
				t.Fatalf("procs %d, memory %d: the stream is out of order", procs, memory)
			}
			if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) > 0 {
				t.Errorf("procs %d, memory %d: %d spool files left", procs, memory, len(left))
			}
		}
	}
}

// A failed task ends the stream: no later task waits forever, and the
// error is the failed task's.
func TestStreamFailure(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		var out strings.Builder
		s := NewStream(&out, 16)
		err := Do(procs, 30, func(i int) error {
			w := s.Writer(i)
			fmt.Fprintf(w, "task %d\n", i)
			var err error
			if i == 6 {
				err = fmt.Errorf("task %d failed", i)
			}
			if ferr := w.Finish(err != nil); err == nil {
				err = ferr
			}
			return err
		})
		if err == nil || err.Error() != "task 6 failed" {
			t.Errorf("procs %d: %v", procs, err)
		}
		if !strings.HasPrefix(out.String(), "task 0\ntask 1\ntask 2\ntask 3\ntask 4\ntask 5\n") {
			t.Errorf("procs %d: the tasks before the failure wrote %q", procs, out.String())
		}
	}
}
