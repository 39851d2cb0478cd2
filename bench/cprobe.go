package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// cProbes builds the C probe benchmark of the C shim (hmbtrace's
// hmb_enter/hmb_leave against libotf2's OTF2_EvtWriter_Enter/Leave, same
// RDTSC clock) and returns its path: it needs gcc and libotf2-trace-dev.
func cProbes(o *options) (string, error) {
	if why := missing(prereq{"gcc", "gcc"}, prereq{"make", "make"}); why != "" {
		return "", errors.New(why)
	}
	if _, err := os.Stat("/usr/include/otf2/otf2.h"); err != nil {
		return "", fmt.Errorf("no libotf2 headers (Debian package libotf2-trace-dev)")
	}
	if err := makeCshim(o, "cshim", "bench-binary"); err != nil {
		return "", fmt.Errorf("building the C probe benchmark: %w", err)
	}
	bin := filepath.Join(o.root, "build", "bench", "probe_bench")
	if _, err := os.Stat(bin); err != nil {
		return "", err
	}
	return bin, nil
}

// The C subjects: hmbtrace's in both probe modes (HMB_C_PROBE), libotf2's.
const (
	cDirect  = "hmbtrace (C shim)"
	cSurvive = "hmbtrace (C shim, HMB_SURVIVE=1)"
	cStaged  = "hmbtrace (C shim, HMB_C_PROBE=staged)"
	cOTF2    = "libotf2 OTF2_EvtWriter (C)"
	cHooks   = "hmbtrace -finstrument-functions (C)"
)

// runCProbes runs it once in each probe mode and returns ns/event per
// subject.
func runCProbes(path string, quick bool) (map[string]float64, error) {
	direct, err := runCProbesMode(path, quick, "direct", map[string]string{"hmbtrace": cDirect, "otf2": cOTF2, "cyg": cHooks})
	if err != nil {
		return nil, err
	}
	staged, err := runCProbesMode(path, quick, "staged", map[string]string{"hmbtrace": cStaged})
	if err != nil {
		return nil, err
	}
	direct[cStaged] = staged[cStaged]
	survive, err := runCProbesMode(path, quick, "direct", map[string]string{"hmbtrace": cSurvive}, "HMB_SURVIVE=1")
	if err != nil {
		return nil, err
	}
	direct[cSurvive] = survive[cSurvive]
	return direct, nil
}

// runCProbesMode runs it under HMB_C_PROBE=mode and the extra variables
// env, and returns the figures of the variants names maps to subjects.
func runCProbesMode(path string, quick bool, mode string, names map[string]string, env ...string) (map[string]float64, error) {
	rounds, iters := "3", "800000"
	if quick {
		rounds, iters = "1", "200000"
	}
	cmd := exec.Command(path, rounds, iters)
	cmd.Dir = filepath.Dir(path)
	cmd.Env = append(os.Environ(), "HMB_OUTPUT="+filepath.Join(filepath.Dir(path), "hmb-out"), "HMB_C_PROBE="+mode, "HMB_THROTTLE=0")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", path, err, out)
	}
	res := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 3 && f[2] == "ns" {
			if subject, ok := names[f[0]]; ok {
				if v, err := strconv.ParseFloat(f[1], 64); err == nil {
					res[subject] = v
				}
			}
		}
	}
	if len(res) != len(names) {
		return nil, fmt.Errorf("unexpected output of %s:\n%s", path, out)
	}
	return res, nil
}

// cThrottled is what the benchmark's throttled mode measures, ns/event.
type cThrottled struct {
	probe   float64 // hmb_enter/hmb_leave of a throttled region
	hooks   float64 // -finstrument-functions hooks of throttled functions, beyond the calls
	empty   float64 // an empty call to a local function
	library float64 // an empty call into a shared object, through the PLT as hmb_enter's
}

// runCThrottled runs the benchmark's throttled mode: two regions switched
// off at their first leave (HMB_THROTTLE_CALLS=1, HMB_THROTTLE_TIME=1h),
// two throttled functions through the hooks, and the same loop of empty
// calls, local and into a shared object.
func runCThrottled(path string, quick bool) (cThrottled, error) {
	rounds, iters := "3", "800000"
	if quick {
		rounds, iters = "1", "200000"
	}
	cmd := exec.Command(path, "throttled", rounds, iters)
	cmd.Dir = filepath.Dir(path)
	cmd.Env = append(os.Environ(), "HMB_OUTPUT="+filepath.Join(filepath.Dir(path), "hmb-out"), "HMB_THROTTLE_CALLS=1", "HMB_THROTTLE_TIME=1h")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return cThrottled{}, fmt.Errorf("%s throttled: %v\n%s", path, err, out)
	}
	r := cThrottled{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	to := map[string]*float64{"throttled": &r.probe, "throttled cyg": &r.hooks, "empty call": &r.empty, "library call": &r.library}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		// "  <label> <value> ns  (...)": the label is the words before the value.
		f := strings.Fields(sc.Text())
		for i := 1; i+1 < len(f); i++ {
			if f[i+1] != "ns" {
				continue
			}
			if x, err := strconv.ParseFloat(f[i], 64); err == nil {
				if p, ok := to[strings.Join(f[:i], " ")]; ok {
					*p = x
				}
			}
			break
		}
	}
	if math.IsNaN(r.probe) || math.IsNaN(r.hooks) || math.IsNaN(r.empty) || math.IsNaN(r.library) {
		return cThrottled{}, fmt.Errorf("unexpected output of %s throttled:\n%s", path, out)
	}
	return r, nil
}

// cPairs is what probe_bench's pairs mode measured: hmbtrace's C probe and
// libotf2's event writer in alternated slices on one CPU.
type cPairs struct {
	hmb, otf2   float64 // ns/event, the medians of the slices
	ratio       float64 // hmbtrace over libotf2: the median of the ratio within a pair
	q1, q3      float64 // its quartiles
	pairs       int
	sliceEvents int
}

// runCPairs runs probe_bench pairs: the figure the README quotes for the C
// probe against libotf2, measured as the Go probe is against the C one
// (probeslice.go), so that it survives the machine's changes of speed.
func runCPairs(path string, quick bool) (cPairs, error) {
	pairs := "192"
	if quick {
		pairs = "64"
	}
	cmd := exec.Command(path, "pairs", pairs, strconv.Itoa(sliceIterations))
	cmd.Dir = filepath.Dir(path)
	// A buffer that keeps every event, throttling off: the probe measured is the recording one.
	cmd.Env = append(os.Environ(), "HMB_OUTPUT="+filepath.Join(filepath.Dir(path), "hmb-out"), "HMB_THROTTLE=0",
		"HMB_BUFFER_SIZE=256M", "HMB_C_PROBE=direct")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return cPairs{}, fmt.Errorf("%s pairs: %v\n%s", path, err, out)
	}
	var r cPairs
	sc := bufio.NewScanner(bytes.NewReader(out))
	found := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var lo, hi float64
		switch {
		case strings.HasPrefix(line, "hmbtrace "):
			if _, err := fmt.Sscanf(line, "hmbtrace %g ns", &r.hmb); err == nil {
				found++
			}
		case strings.HasPrefix(line, "otf2 "):
			if _, err := fmt.Sscanf(line, "otf2 %g ns", &r.otf2); err == nil {
				found++
			}
		case strings.HasPrefix(line, "hmbtrace/otf2 within a pair: "):
			if _, err := fmt.Sscanf(line, "hmbtrace/otf2 within a pair: %g median of %d pairs (quartiles %g..%g, min..max %g..%g)",
				&r.ratio, &r.pairs, &r.q1, &r.q3, &lo, &hi); err == nil {
				found++
			}
		}
	}
	if found != 3 {
		return cPairs{}, fmt.Errorf("unexpected output of %s pairs:\n%s", path, out)
	}
	r.sliceEvents = 4 * sliceIterations
	return r, nil
}
