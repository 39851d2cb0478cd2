package measure_test

import (
	"fmt"
	"os"

	"github.com/hmbtrace/hmbtrace/measure"
)

// The ranks of an MPI run traced through libhmbtrace-mpi write one run
// archive per HMB_AGGREGATE ranks by default; a job script chooses
// otherwise with the variables, which ConfigFromEnv reads as the library
// does, and rejects with the variable named.
func ExampleConfig_outputLayout() {
	for _, kv := range [][2]string{{"HMB_OUTPUT_LAYOUT", "rank-files"}, {"HMB_AGGREGATE", "256"},
		{"HMB_OUTPUT_EVENTS", "none"}, {"HMB_COLLECTIVE_TIMEOUT", "30s"}} {
		os.Setenv(kv[0], kv[1])
		defer os.Unsetenv(kv[0])
	}
	c, err := measure.ConfigFromEnv()
	fmt.Println(c.OutputLayout == measure.LayoutRankFiles, c.Aggregate, c.NoEvents, c.CollectiveTimeout, err)

	os.Setenv("HMB_AGGREGATE", "0")
	_, err = measure.ConfigFromEnv()
	fmt.Println(err)
	// Output:
	// true 256 true 30s <nil>
	// hmbtrace: HMB_AGGREGATE="0": want a number of ranks per archive file, 1 or more
}
