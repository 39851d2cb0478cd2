package convert

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// archiveFiles reads every file of the archive in dir by its path in it.
func archiveFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lazyDefinitions is a trace whose definitions are made on first use, in
// an order that depends on the order of the locations: region ids the file
// does not define, first used by later locations, and messages between
// locations that the first location does not send.
func lazyDefinitions(t *testing.T) *tracefile.File {
	b := tracetest.NewBuilder("lazy", "node", 0, time.Unix(1700000000, 0), "main", "work")
	quiet := b.Location("quiet")
	quiet.Enter(10, 1)
	for k := uint64(0); k < 200; k++ {
		quiet.Enter(20+10*k, 2)
		quiet.Leave(25 + 10*k)
	}
	quiet.Leave(5000)
	for n := 0; n < 5; n++ {
		l := b.Location("worker " + string(rune('a'+n)))
		l.Enter(10, 1)
		// Undefined regions 9 and 8, in another order on every other
		// location.
		first, second := uint32(9), uint32(8)
		if n%2 == 1 {
			first, second = second, first
		}
		l.Enter(20, first)
		l.Leave(30)
		l.Message(40, encode.KindSend, uint64(1+(n+1)%5), false, 3, 64)
		l.Message(50, encode.KindRecv, uint64(1+(n+4)%5), false, 3, 64)
		l.Enter(60, second)
		l.Leave(70)
		l.Leave(80)
	}
	return b.Write(t, t.TempDir())
}

// The archive is the same byte for byte whatever the number of workers.
func TestExportProcsIdentical(t *testing.T) {
	traces := map[string][]*tracefile.File{
		"ranks":   tracetest.Ranks(t, t.TempDir(), 3, 4, 100, 0),
		"shed":    tracetest.Ranks(t, t.TempDir(), 2, 3, 1500, 64<<10),
		"lazy":    {lazyDefinitions(t)},
		"mpi":     mpiRun(t, 4, []int{0, 1, 2, 3}),
		"partial": mpiRun(t, 4, []int{0, 2}),
		"openmp":  {ompTrace(t)},
		"rma":     rmaRun(t),
	}
	for name, files := range traces {
		opt := otf2.Options{TraceID: 42, Creator: "test"}
		dir1 := filepath.Join(t.TempDir(), "one")
		st1, err := ExportProcs(dir1, files, opt, 1)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := archiveFiles(t, dir1)
		for _, procs := range []int{2, 3, 8} {
			dir := filepath.Join(t.TempDir(), "n")
			st, err := ExportProcs(dir, files, opt, procs)
			if err != nil {
				t.Fatalf("%s, %d workers: %v", name, procs, err)
			}
			if !reflect.DeepEqual(st, st1) {
				t.Errorf("%s: %d workers: stats %+v, 1 worker %+v", name, procs, st, st1)
			}
			got := archiveFiles(t, dir)
			if len(got) != len(want) {
				t.Errorf("%s: %d workers wrote %d files, 1 worker %d", name, procs, len(got), len(want))
			}
			for p, b := range want {
				if !bytes.Equal(got[p], b) {
					t.Errorf("%s: %d workers: %s differs from 1 worker's", name, procs, p)
				}
			}
		}
	}
}

// Stats.add covers every count: a field added later must be added up too.
func TestStatsAdd(t *testing.T) {
	var one Stats
	v := reflect.ValueOf(&one).Elem()
	for k := 0; k < v.NumField(); k++ {
		switch f := v.Field(k); f.Kind() {
		case reflect.Uint64:
			f.SetUint(1)
		case reflect.Int:
			f.SetInt(1)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"x"}))
		default:
			t.Fatalf("Stats.%s: a %v, which add does not know", v.Type().Field(k).Name, f.Kind())
		}
	}
	var sum Stats
	sum.add(&one)
	sum.add(&one)
	w := reflect.ValueOf(sum)
	for k := 0; k < w.NumField(); k++ {
		f := w.Field(k)
		if (f.Kind() == reflect.Slice && f.Len() != 2) || (f.Kind() != reflect.Slice && !f.Equal(reflect.ValueOf(2).Convert(f.Type()))) {
			t.Errorf("Stats.%s is not added up", w.Type().Field(k).Name)
		}
	}
}

// An error is the one a sequential export stops at, the first bad
// location's, and nothing is left behind.
func TestExportProcsError(t *testing.T) {
	files := []*tracefile.File{tracetest.BadNesting(t, t.TempDir())}
	tracetest.SameErrorForProcs(t, func(procs int) error {
		dir := filepath.Join(t.TempDir(), "archive")
		_, err := ExportProcs(dir, files, otf2.Options{}, procs)
		if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
			t.Errorf("%d workers: %s left behind", procs, dir)
		}
		return err
	})
}
