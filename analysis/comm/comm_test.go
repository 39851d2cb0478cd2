package comm_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"testing"

	. "github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// record makes a trace of n locations whose sends follow pattern.
func record(t testing.TB, n int, pattern func(from int) []int) *tracefile.File {
	t.Helper()
	m, err := measure.Start(measure.Config{Output: t.TempDir(), Name: "comm", BufferSize: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	locs := make([]*measure.Location, n)
	for i := range locs {
		locs[i] = m.Location(fmt.Sprintf("p%d", i))
	}
	for i, l := range locs {
		for _, to := range pattern(i) {
			l.Send(locs[to], 1, uint64(100*(i+1)))
			locs[to].Recv(l, 1, uint64(100*(i+1)))
		}
	}
	return tracetest.Finish(t, m)
}

// The patterns of Brendel et al., figure 10: exactly their cells, no others.
func TestPatternsGiveExactlyTheirCells(t *testing.T) {
	const n = 8
	patterns := map[string]func(int) []int{
		"ring": func(i int) []int { return []int{(i + 1) % n} },
		"neighbour": func(i int) []int {
			var to []int
			if i > 0 {
				to = append(to, i-1)
			}
			if i < n-1 {
				to = append(to, i+1)
			}
			return to
		},
		"all-to-all": func(i int) []int {
			var to []int
			for j := 0; j < n; j++ {
				if j != i {
					to = append(to, j)
				}
			}
			return to
		},
		"to-master": func(i int) []int {
			if i == 0 {
				return nil
			}
			return []int{0}
		},
	}
	for name, p := range patterns {
		t.Run(name, func(t *testing.T) {
			m, err := FromFiles([]*tracefile.File{record(t, n, p)})
			if err != nil {
				t.Fatal(err)
			}
			var want strings.Builder
			for i := 0; i < n; i++ {
				for _, j := range sorted(p(i)) {
					fmt.Fprintf(&want, "p%d\tp%d\t1\t%d\n", i, j, 100*(i+1))
				}
			}
			var got strings.Builder
			render.CommTSV(&got, m)
			if got.String() != want.String() {
				t.Errorf("TSV\n%s\nwant\n%s", got.String(), want.String())
			}
			for _, draw := range []func(io.Writer) error{func(w io.Writer) error { return render.CommMatrixSVG(w, m, Messages) }, func(w io.Writer) error { return render.CommDiagramSVG(w, m) }} {
				var b bytes.Buffer
				if err := draw(&b); err != nil {
					t.Fatal(err)
				}
				parseSVG(t, b.Bytes())
			}
		})
	}
}

func sorted(s []int) []int {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func parseSVG(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q", root)
	}
}

// At 1,000 locations talking all to all, both SVGs stay a few MB.
func TestThousandLocationsStaySmall(t *testing.T) {
	if testing.Short() {
		t.Skip("records a million messages")
	}
	const n = 1000
	f := record(t, n, func(i int) []int {
		var to []int
		for j := 0; j < n; j++ {
			if j != i {
				to = append(to, j)
			}
		}
		return to
	})
	m, err := FromFiles([]*tracefile.File{f})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cells) != n*(n-1) {
		t.Fatalf("%d cells", len(m.Cells))
	}
	for name, draw := range map[string]func(io.Writer) error{
		"matrix": func(w io.Writer) error { return render.CommMatrixSVG(w, m, Bytes) }, "diagram": func(w io.Writer) error { return render.CommDiagramSVG(w, m) },
	} {
		var b bytes.Buffer
		if err := draw(&b); err != nil {
			t.Fatal(err)
		}
		parseSVG(t, b.Bytes())
		t.Logf("%s: %d KiB", name, b.Len()>>10)
		if b.Len() > 4<<20 {
			t.Errorf("%s SVG of %d bytes at %d locations", name, b.Len(), n)
		}
	}
}

func TestParseValue(t *testing.T) {
	for _, s := range []string{"messages", "bytes", "mean"} {
		if _, err := ParseValue(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseValue("volume"); err == nil {
		t.Error("volume accepted")
	}
}
