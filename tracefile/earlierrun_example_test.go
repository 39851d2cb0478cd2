package tracefile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A run that starts finds the files of an earlier run of its name and
// moves them into a directory of their own before it writes its own.
func ExampleMoveEarlierRun() {
	dir, err := os.MkdirTemp("", "hmb-out")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	earlier := time.Date(2026, 12, 6, 9, 30, 0, 0, time.Local)
	for _, name := range []string{"solver.0.hmb", "solver.1.hmb", "other.0.hmb"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, nil, 0o644)
		os.Chtimes(p, earlier, earlier)
	}
	moved, err := tracefile.MoveEarlierRun(dir, "solver", time.Now())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(filepath.Base(moved.Dir), moved.Files)
	// Output:
	// solver.run-20261206-093000 [solver.0.hmb solver.1.hmb]
}
