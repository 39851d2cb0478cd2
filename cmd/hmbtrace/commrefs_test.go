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
	cmds = append(cmds, []string{"dump", "RANK1"}, []string{"dump", "-definitions"}, []string{"dump", "-definitions", "-maps"})
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

// TestDumpDefinitionsMaps: dump -definitions -maps says how each rank's
// ids map to the run's: the two colours of an irregular split are two of
// the run's communicators, and each rank's split maps to its colour's.
func TestDumpDefinitionsMaps(t *testing.T) {
	const n = 8
	dir := t.TempDir()
	if _, err := tracetest.WriteArchive(dir, "halo", n, n, func(r int) *tracetest.Builder {
		b := tracetest.HaloRank("halo", r, n, 2)
		tracetest.HaloSplit(b, r, n)
		return b
	}); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if rc := run([]string{"dump", "-definitions", "-maps", dir}, &out, &errOut); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut.String())
	}
	members := map[string]string{} // the run's communicator id -> its members
	split := map[int]string{}      // rank -> the run's id of its split (its communicator 6)
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Split(line, "\t")
		switch {
		case f[0] == "comm":
			members[f[1]] = strings.TrimPrefix(f[4], "members=")
		case f[0] == "map" && f[2] == "comm":
			for _, pair := range strings.Split(f[3], ",") {
				if local, run, _ := strings.Cut(pair, "="); local == "6" {
					var r int
					fmt.Sscan(f[1], &r)
					split[r] = run
				}
			}
		}
	}
	// Ranks 0, 3, 5, 6 have an even number of set bits; 1, 2, 4, 7 odd.
	for r, want := range map[int]string{0: "0,3,5,6", 3: "0,3,5,6", 1: "1,2,4,7", 7: "1,2,4,7"} {
		if got := members[split[r]]; got != want {
			t.Errorf("rank %d's split maps to the run's communicator %q of members %q, want %q\n%s", r, split[r], got, want, out.String())
		}
	}
	if rc := run([]string{"dump", "-maps", dir}, &out, &errOut); rc == 0 {
		t.Errorf("dump -maps without -definitions succeeded")
	}
}
