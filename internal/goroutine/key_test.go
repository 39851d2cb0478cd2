package goroutine

import (
	"runtime"
	"sync"
	"testing"
)

func TestKeyDistinct(t *testing.T) { testDistinct(t, Key) }

// The fallback of the architectures without an assembly Key.
func TestStackKeyDistinct(t *testing.T) { testDistinct(t, stackKey) }

func testDistinct(t *testing.T, Key func() uintptr) {
	const n = 64
	keys := make([]uintptr, n)
	var ready, done sync.WaitGroup
	ready.Add(n)
	done.Add(n)
	release := make(chan struct{})
	for i := range n {
		go func() {
			defer done.Done()
			keys[i] = Key()
			again := Key()
			if again != keys[i] {
				t.Errorf("goroutine %d: Key changed from %#x to %#x", i, keys[i], again)
			}
			ready.Done()
			<-release // all alive at once, so no descriptor is recycled
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
	seen := map[uintptr]int{}
	for i, k := range keys {
		if k == 0 || k&7 != 0 {
			t.Errorf("goroutine %d: Key %#x is zero or not aligned to 8", i, k)
		}
		if j, dup := seen[k]; dup {
			t.Errorf("goroutines %d and %d, running at once, have the same key %#x", j, i, k)
		}
		seen[k] = i
	}
	if Key() == 0 {
		t.Error("the test's goroutine has key 0")
	}
}

func TestKeyStable(t *testing.T) { testStable(t, Key) }

func TestStackKeyStable(t *testing.T) { testStable(t, stackKey) }

func testStable(t *testing.T, Key func() uintptr) {
	k := Key()
	runtime.Gosched()
	runtime.GC() // may move the goroutine between threads, never its g
	if Key() != k {
		t.Errorf("Key changed across a reschedule: %#x, then %#x", k, Key())
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uintptr
	}{
		{"goroutine 17 [running]:\n", 17},
		{"goroutine 1 [", 1},
		{"goroutine 123456789 [", 123456789},
		{"gorout", 0},
		{"thread 5", 0},
	} {
		if got := parse([]byte(c.in)); got != c.want {
			t.Errorf("parse(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func BenchmarkKey(b *testing.B) {
	var k uintptr
	for b.Loop() {
		k += Key()
	}
	sink = k
}

func BenchmarkStackKey(b *testing.B) {
	var k uintptr
	for b.Loop() {
		k += stackKey()
	}
	sink = k
}

var sink uintptr
