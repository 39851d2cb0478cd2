package measure

import (
	"runtime/trace"
	"testing"
)

// What HMB_GORUNTIME costs a program: the probes themselves do not change,
// the execution tracer and the converter that reads it do. Each benchmark
// runs with the option off and on:
//
//	go test -run '^$' -bench GoRuntime -count 5 ./measure
//
// probes: an Enter/Leave pair, the probes' own cost (ns/event).
// pingpong: two goroutines that hold locations hand a token back and forth
// over unbuffered channels inside a region each, so every round trip blocks
// and wakes both: the worst case for the tracer (ns/op, one round trip).
func BenchmarkGoRuntime(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run("probes/"+name, func(b *testing.B) { benchGoRuntimeProbes(b, on) })
		b.Run("pingpong/"+name, func(b *testing.B) { benchGoRuntimePingPong(b, on) })
	}
}

// startBenchGoRuntime starts a measurement with the option on or off and a
// buffer that holds what the benchmark records without a reduction.
func startBenchGoRuntime(b *testing.B, on bool) *Measurement {
	if on && trace.IsEnabled() {
		b.Skip("the execution tracer is already on (go test -trace)")
	}
	m := startTest(b, Config{GoRuntime: on, NoThrottle: true, BufferSize: 256 << 20})
	if on && m.gort == nil {
		b.Fatal("the bridge did not start")
	}
	return m
}

func benchGoRuntimeProbes(b *testing.B, on bool) {
	m := startBenchGoRuntime(b, on)
	defer m.Close()
	r := m.Region("r")
	loc := m.Location("bench")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loc.Enter(r)
		loc.Leave(r)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/event")
}

func benchGoRuntimePingPong(b *testing.B, on bool) {
	m := startBenchGoRuntime(b, on)
	defer m.Close()
	r := m.Region("round")
	ping, pong := make(chan int), make(chan int)
	done := make(chan struct{})
	go func() {
		defer close(done)
		loc := m.Location("pong")
		defer loc.Done()
		for v := range ping {
			loc.Enter(r)
			pong <- v
			loc.Leave(r)
		}
	}()
	loc := m.Location("ping")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		loc.Enter(r)
		ping <- i
		<-pong
		loc.Leave(r)
	}
	b.StopTimer()
	close(ping)
	<-done
	loc.Done()
}

// BenchmarkGoRuntimeHold times what taking and giving back a location adds
// with the option on: two trace.Log calls (the hold and the release).
func BenchmarkGoRuntimeHold(b *testing.B) {
	m := startBenchGoRuntime(b, true)
	defer m.Close()
	loc := m.Location("bench")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.goRuntimeHold(loc)
		m.goRuntimeRelease(loc)
	}
}

func TestGoRuntimeHoldAllocatesNothing(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("the execution tracer is already on (go test -trace)")
	}
	m := startTest(t, Config{GoRuntime: true})
	defer m.Close()
	loc := m.Location("x")
	// AllocsPerRun counts every goroutine's allocations, the converter's
	// among them when it parses a generation in the middle: the least of
	// three tries is the hooks' own.
	least := -1.0
	for try := 0; try < 3; try++ {
		a := testing.AllocsPerRun(100, func() {
			m.goRuntimeHold(loc)
			m.goRuntimeRelease(loc)
		})
		if least < 0 || a < least {
			least = a
		}
	}
	if least != 0 {
		t.Errorf("holding and releasing a location allocates %.1f times, want 0", least)
	}
}
