package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// stream is an event sequence to encode in every format: per location, a
// well-nested list of enters and leaves with timestamps in ns.
type stream struct {
	name    string
	regions []string // region i+1's name
	locs    [][]event
}

type event struct {
	enter  bool
	region uint32 // 1-based
	t      uint64 // ns
}

func (s *stream) events() int {
	n := 0
	for _, l := range s.locs {
		n += len(l)
	}
	return n
}

// xorshift64star is the generator the synthetic stream is defined with.
type xorshift64star uint64

func (x *xorshift64star) next() uint64 {
	v := uint64(*x)
	v ^= v >> 12
	v ^= v << 25
	v ^= v >> 27
	*x = xorshift64star(v)
	return v * 0x2545F4914F6CDD1D
}

// syntheticStream is the standard stream: per location
// main { iters × solve { compute, compute, compute, exchange } }, times in
// ns from 1e12 with gaps uniform in 50–2000 ns drawn by xorshift64* seeded
// 0x9E3779B97F4A7C15 + location.
func syntheticStream(locations, iters int) *stream {
	s := &stream{name: "synthetic", regions: []string{"main", "solve", "compute", "exchange"}}
	const main, solve, compute, exchange = 1, 2, 3, 4
	for l := 0; l < locations; l++ {
		rng := xorshift64star(0x9E3779B97F4A7C15 + uint64(l))
		t := uint64(1e12)
		var evs []event
		put := func(enter bool, r uint32) {
			evs = append(evs, event{enter, r, t})
			t += 50 + rng.next()%1951
		}
		put(true, main)
		for i := 0; i < iters; i++ {
			put(true, solve)
			for _, r := range []uint32{compute, compute, compute, exchange} {
				put(true, r)
				put(false, r)
			}
			put(false, solve)
		}
		put(false, main)
		s.locs = append(s.locs, evs)
	}
	return s
}

// heatStream runs examples/heat and reads its enter/leave events back.
func heatStream(o *options) (*stream, error) {
	dir := filepath.Join(o.work, "heat-stream")
	args := []string{"-quiet", "-n", "1024", "-iters", "100"}
	if o.quick {
		args = []string{"-quiet", "-n", "512", "-iters", "30"}
	}
	bin, err := buildHeat(o, "")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HMB_OUTPUT="+dir, "HMB_NAME=heat", "HMB_CLOCK=monotonic", "HMB_TIMER_SHIFT=0", "HMB_THROTTLE=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("examples/heat: %v\n%s", err, out)
	}
	f, err := tracefile.Open(filepath.Join(dir, "heat.0.hmb"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &stream{name: "examples/heat"}
	for _, r := range f.Regions {
		s.regions = append(s.regions, r.Name)
	}
	for _, l := range f.Locations {
		var evs []event
		it := f.Events(l.ID)
		var e tracefile.Event
		for it.Next(&e) {
			if e.Kind == encode.KindEnter || e.Kind == encode.KindLeave {
				evs = append(evs, event{e.Kind == encode.KindEnter, e.Region, uint64(f.Nanos(e.Time)) + 1e12})
			}
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		s.locs = append(s.locs, evs)
	}
	return s, nil
}

// buildHeat builds examples/heat once per build-tag set.
func buildHeat(o *options, tags string) (string, error) {
	name := "heat"
	if tags != "" {
		name += "-" + strings.ReplaceAll(tags, ",", "-")
	}
	bin := filepath.Join(o.work, name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	args := []string{"build", "-o", bin}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	cmd := exec.Command("go", append(args, "./examples/heat")...)
	cmd.Dir = o.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building examples/heat: %v\n%s", err, out)
	}
	return bin, nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run bench inside the hmbtrace module")
	}
	return filepath.Dir(mod), nil
}

func openTrace(path string) (*tracefile.File, error) { return tracefile.Open(path) }
