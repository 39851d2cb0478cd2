package measure

import (
	"fmt"
	"io"
	"path/filepath"

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
	moved, err := tracefile.MoveEarlierRun(m.cfg.Output, m.cfg.Name, m.wall)
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
