package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// How the root's merges grow with p, measured apart from the runs: the
// runs here reach 256 ranks with ranks sharing cores, whose waits inflate
// the root's CPU, so they cannot tell a growth as log p from one as p.
// cshim's BenchmarkRootMergeScale merges the parts a binomial tree
// delivers to rank 0 (a halo code's, every pass's and the definitions)
// on one core and reports the process's CPU per pass.

// rootMergeRanks are the rank counts the merges are measured at: 10⁵
// takes minutes to set up and 3 GB, so the model extrapolates from these.
var rootMergeRanks = []int{1000, 10000}

// rootMergeLine is one pass's line of the benchmark's output.
var rootMergeLine = regexp.MustCompile(`^BenchmarkRootMergeScale/p=(\d+)/\S+\s.*\s([0-9.eE+-]+) CPU-ms/root`)

// runRootMerges returns the root's merges' CPU in seconds, summed over the
// passes, by rank count.
func runRootMerges(o *options) (map[int]float64, error) {
	var counts []string
	for _, p := range rootMergeRanks {
		counts = append(counts, strconv.Itoa(p))
	}
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkRootMergeScale$", "-benchtime", "1x", "./cshim")
	cmd.Dir = o.root
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "HMB_ROOT_MERGE_RANKS="+strings.Join(counts, ","))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("the root's merges: go test -bench RootMergeScale ./cshim: %v\n%s", err, out)
	}
	return parseRootMerges(string(out))
}

// parseRootMerges sums the benchmark's passes by rank count.
func parseRootMerges(out string) (map[int]float64, error) {
	sum := map[int]float64{}
	for _, line := range strings.Split(out, "\n") {
		m := rootMergeLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		p, err1 := strconv.Atoi(m[1])
		ms, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("the root's merges: %q", line)
		}
		sum[p] += ms / 1e3
	}
	if len(sum) < 2 {
		return nil, fmt.Errorf("the root's merges: %d rank counts in the benchmark's output, want 2 or more:\n%s", len(sum), out)
	}
	return sum, nil
}

// rootMergeFit fits the merges' CPU as a + b × p and says so.
func rootMergeFit(merges map[int]float64, big int) (at float64, note string) {
	ps := make([]int, 0, len(merges))
	for p := range merges {
		ps = append(ps, p)
	}
	sort.Ints(ps)
	var xs, ys []float64
	var per []string
	for _, p := range ps {
		xs, ys = append(xs, float64(p)), append(ys, merges[p])
		per = append(per, fmt.Sprintf("%d ranks %.1f ms", p, 1e3*merges[p]))
	}
	a, b := leastSquares(xs, ys)
	at = max(a+b*float64(big), 0)
	return at, fmt.Sprintf("model: the root's merges of every pass, measured apart on one core (cshim's BenchmarkRootMergeScale, process CPU): %s; "+
		"they grow as p (the gathered results: the matrix, the segments, the wait states, the choice's irregularities, the definitions' locations): "+
		"fit %.2f ms + %.2f µs × p gives %.0f ms at %d ranks",
		strings.Join(per, ", "), 1e3*a, 1e6*b, 1e3*at, big)
}
