package measure

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// moveEarlierRun moves the files an earlier run of the same name left in
// the output directory into a directory of their own, before this run
// writes any (tracefile.MoveEarlierRun), and says where in one line on w.
// Rank 0 does it for a parallel run: the other ranks' files are the same
// run's, and they write theirs only at the end, after rank 0 started.
func (m *Measurement) moveEarlierRun(w io.Writer) {
	if m.cfg.Rank != 0 {
		return
	}
	// Files written after this process began are this run's (another
	// rank's) or a concurrent one's, also when the measurement starts
	// late: a C program whose MPI calls the wrappers do not see starts
	// it at its first probe, after its peers may have written theirs.
	moved, err := tracefile.MoveEarlierRun(m.cfg.Output, m.cfg.Name, earliest(m.wall, processBegan))
	if err != nil {
		fmt.Fprintf(w, "hmbtrace: the files of an earlier run of %s in %s stay where they are (this run may replace them): %v\n",
			m.cfg.Name, m.cfg.Output, err)
		return
	}
	if moved == nil {
		return
	}
	what := moved.Files[0]
	if n := len(moved.Files); n > 1 {
		what = fmt.Sprintf("%d files of %s", n, m.cfg.Name)
	}
	fmt.Fprintf(w, "hmbtrace: an earlier run's %s moved to %s%c (a new run never replaces them)\n",
		what, moved.Dir, filepath.Separator)
}

// processBegan is when the process began, as near as Go can tell: the
// runtime initializes this package before main, and a C program's
// library before main too.
var processBegan = time.Now()

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
