package tracetest

import (
	"os"
	"strconv"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestWriteHalo writes the rank files of a halo code when HMB_HALO_DIR
// and HMB_HALO_RANKS are set (HMB_HALO_STEPS, default 20): the synthetic
// run the communicators' cost at 10^3 and 10^4 ranks is measured on.
func TestWriteHalo(t *testing.T) {
	dir, n := os.Getenv("HMB_HALO_DIR"), os.Getenv("HMB_HALO_RANKS")
	if dir == "" || n == "" {
		t.Skip("HMB_HALO_DIR and HMB_HALO_RANKS are not set")
	}
	ranks, err := strconv.Atoi(n)
	if err != nil || ranks < 1 {
		t.Fatalf("HMB_HALO_RANKS=%q is not a positive number", n)
	}
	steps := 20
	if s := os.Getenv("HMB_HALO_STEPS"); s != "" {
		if steps, err = strconv.Atoi(s); err != nil || steps < 1 {
			t.Fatalf("HMB_HALO_STEPS=%q is not a positive number", s)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for r := 0; r < ranks; r++ {
		if _, err := HaloRank("halo", r, ranks, steps).WriteFile(dir); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHaloGrid(t *testing.T) {
	for _, c := range []struct{ ranks, px, py int }{{1, 1, 1}, {7, 1, 7}, {1000, 25, 40}, {10000, 100, 100}} {
		if px, py := HaloGrid(c.ranks); px != c.px || py != c.py {
			t.Errorf("HaloGrid(%d) = %d x %d, want %d x %d", c.ranks, px, py, c.px, c.py)
		}
	}
}

// TestWriteHaloArchive writes a halo run as its run archive (one file per
// HMB_HALO_PER_FILE ranks, default 1024) when HMB_HALO_ARCHIVE_DIR and
// HMB_HALO_RANKS are set; HMB_HALO_SPLIT=1 adds HaloSplit's irregular
// communicator: the synthetic archives the readers' memory is measured on.
func TestWriteHaloArchive(t *testing.T) {
	dir, n := os.Getenv("HMB_HALO_ARCHIVE_DIR"), os.Getenv("HMB_HALO_RANKS")
	if dir == "" || n == "" {
		t.Skip("HMB_HALO_ARCHIVE_DIR and HMB_HALO_RANKS are not set")
	}
	ranks, err := strconv.Atoi(n)
	if err != nil || ranks < 1 {
		t.Fatalf("HMB_HALO_RANKS=%q is not a positive number", n)
	}
	perFile := 1024
	if s := os.Getenv("HMB_HALO_PER_FILE"); s != "" {
		if perFile, err = strconv.Atoi(s); err != nil || perFile < 1 {
			t.Fatalf("HMB_HALO_PER_FILE=%q is not a positive number", s)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	paths, err := WriteHaloArchive(dir, "halo", ranks, perFile, 20, os.Getenv("HMB_HALO_SPLIT") == "1")
	if err != nil {
		t.Fatal(err)
	}
	// The bytes of the ranks' traces: the files are sparse, their sizes
	// count the slots' margins.
	var traces, results int64
	for _, p := range paths {
		a, err := tracefile.OpenArchive(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range a.Slots {
			traces += s.Len
		}
		b, err := a.Results()
		if err != nil {
			t.Fatal(err)
		}
		results += int64(len(b))
		a.Close()
	}
	t.Logf("%d ranks in %d files: %d bytes of traces (%.0f per rank), %d bytes of results",
		ranks, len(paths), traces, float64(traces)/float64(ranks), results)
}
