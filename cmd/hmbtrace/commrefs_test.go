package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestArchiveCommRefsSameOutput writes a halo run of 16 ranks with an
// irregular split (tracetest.HaloSplit) as rank files and as run archives
// written as ranks write them (their slots refer to the run's groups:
// COMM REFS), one file and three, and checks that every command prints
// and writes the same from each, the ranks' names aside (same-length
// paths, as in TestArchiveSameOutput).
func TestArchiveCommRefsSameOutput(t *testing.T) {
	const n, perGroup = 16, 6
	root := t.TempDir()
	dir := func(name string) string {
		d := filepath.Join(root, name)
		os.Mkdir(d, 0o755)
		return d
	}
	rankDir, rankDir2, archDir, groupDir := dir("rfile"), dir("rfile12"), dir("ar"), dir("gr")
	rank := func(r int) *tracetest.Builder {
		b := tracetest.HaloRank("halo", r, n, 8)
		tracetest.HaloSplit(b, r, n)
		return b
	}
	for r := 0; r < n; r++ {
		for _, d := range []string{rankDir, rankDir2} {
			if _, err := rank(r).WriteFile(d); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		dir     string
		perFile int
	}{{archDir, n}, {groupDir, perGroup}} {
		paths, err := tracetest.WriteArchive(c.dir, "halo", n, c.perFile, rank)
		if err != nil {
			t.Fatal(err)
		}
		// The slots refer to the run's groups: read alone, one says so.
		a, err := tracefile.OpenArchive(paths[len(paths)-1])
		if err != nil {
			t.Fatal(err)
		}
		s := a.Slots[0]
		raw, _ := os.Open(a.Path)
		_, err = tracefile.Read(io.NewSectionReader(raw, s.Off+32, s.Len), s.Len)
		raw.Close()
		a.Close()
		if err == nil || !strings.Contains(err.Error(), "COMM REFS") {
			t.Fatalf("%s: rank %d's slot read alone: %v; want its communicators to refer to the run's (COMM REFS)", a.Path, s.Rank, err)
		}
	}
	archive := filepath.Join(archDir, "halo.hmbrun")
	type input struct {
		path, ref string
		rankPath  func(r int) string
	}
	inputs := []input{
		{archDir, rankDir, func(r int) string { return fmt.Sprintf("%s#%d", archive, r) }},
		{groupDir, rankDir2, func(r int) string {
			return fmt.Sprintf("%s#%d", tracefile.ArchiveName(groupDir, "halo", r/perGroup, (n+perGroup-1)/perGroup), r)
		}},
	}
	rename := func(in input, b []byte) []byte {
		for r := n - 1; r >= 0; r-- {
			rp, fp := in.rankPath(r), filepath.Join(in.ref, fmt.Sprintf("halo.%d.hmb", r))
			b = bytes.ReplaceAll(b, []byte(rp), []byte(fp))
			b = bytes.ReplaceAll(b, []byte(filepath.Base(rp)), []byte(filepath.Base(fp)))
		}
		return bytes.ReplaceAll(b, []byte(filepath.Dir(in.rankPath(0))), []byte(in.ref))
	}
	// The synthetic ranks have no flat profile, which variation and
	// dynamics find their regions in; they read no communicator either.
	var cmds [][]string
	for _, c := range archiveCommands {
		if c[0] != "variation" && c[0] != "dynamics" {
			cmds = append(cmds, c)
		}
	}
	cmds = append(cmds, []string{"dump", "RANK1"}, []string{"dump", "-definitions"})
	for _, c := range cmds {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			read := func(in, rank1 string) map[string][]byte {
				out := t.TempDir()
				var args []string
				for _, a := range c {
					a = strings.ReplaceAll(a, "OUT", out)
					if a == "RANK1" {
						a = rank1
					}
					args = append(args, a)
				}
				if c[0] != "dump" || c[1] == "-definitions" {
					args = append(args, in)
				}
				res := outputs(t, args, out)
				for k, v := range res {
					v = bytes.ReplaceAll(v, []byte(out), []byte("OUT"))
					res[k] = writtenAt.ReplaceAll(v, []byte("written TIME"))
				}
				return res
			}
			for _, in := range inputs {
				want := read(in.ref, filepath.Join(in.ref, "halo.1.hmb"))
				got := read(in.path, in.rankPath(1))
				if len(got) != len(want) {
					t.Errorf("%s: %d outputs, from rank files %d", in.path, len(got), len(want))
				}
				for k, w := range want {
					if g, ok := got[k]; !ok || !bytes.Equal(rename(in, g), w) {
						t.Errorf("%s: %s differs from the rank files' (%d vs %d bytes): %s", in.path, k, len(g), len(w), firstDiff(w, rename(in, g)))
					}
				}
			}
		})
	}
}
