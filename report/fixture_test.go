package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// fixtures records the two traces most tests report on, as ranks 0 and 1 of
// one run, each with 2 locations of 300 iterations in a 32 KiB buffer:
// rank 0 with the depth policy (depth 4 closes) and a 1 µs duration filter
// (the tiny checks vanish), rank 1 with the keep-last policy (both
// locations windowed, main and the open calls entered before the window).
func fixtures(t testing.TB) []*tracefile.File {
	t.Helper()
	dir := t.TempDir()
	paths := []string{
		synthetic{locations: 2, iterations: 300, rows: 20, slowFrom: 100, slowTo: 130, tiny: true,
			cfg: measure.Config{BufferSize: 32 << 10, BinSize: 1 << 10, MinDuration: time.Microsecond}}.record(t, dir),
		synthetic{locations: 2, iterations: 300, rows: 20,
			cfg: measure.Config{Rank: 1, BufferSize: 32 << 10, BinSize: 1 << 10, Reduction: measure.ReduceLast}}.record(t, dir),
	}
	return open(t, paths...)
}

func open(t testing.TB, paths ...string) []*tracefile.File {
	t.Helper()
	var files []*tracefile.File
	for _, p := range paths {
		files = append(files, tracetest.Open(t, p))
	}
	return files
}

// pageData is the data a page carries for its script.
type pageData struct {
	Regions  []string        `json:"regions"`
	Short    [][]string      `json:"short"`
	Profile  json.RawMessage `json:"profile"`
	Timeline timeline        `json:"timeline"`
}

// parsePage reads the data and the decoded timeline rows out of a page.
func parsePage(t testing.TB, page []byte) (*pageData, []decodedRow) {
	t.Helper()
	between := func(start, end string) []byte {
		i := bytes.Index(page, []byte(start))
		if i < 0 {
			t.Fatalf("page lacks %q", start)
		}
		rest := page[i+len(start):]
		j := bytes.Index(rest, []byte(end))
		if j < 0 {
			t.Fatalf("page lacks %q after %q", end, start)
		}
		return rest[:j]
	}
	var d pageData
	if err := json.Unmarshal(between(`<script type="application/json" id="report-data">`, "</script>"), &d); err != nil {
		t.Fatalf("page data: %v", err)
	}
	bin, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(between(`<script type="application/octet-stream" id="timeline-data">`, "</script>"))))
	if err != nil {
		t.Fatalf("timeline data: %v", err)
	}
	rows, err := decodeRows(bin, d.Timeline.Rows, len(d.Timeline.Columns))
	if err != nil {
		t.Fatalf("timeline data: %v", err)
	}
	return &d, rows
}

// writePage writes the report of files.
func writePage(t testing.TB, files []*tracefile.File, opt Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, files, opt); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
