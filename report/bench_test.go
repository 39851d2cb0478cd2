package report

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// tenMillion is a run of 10,000,208 events: 4 locations of 33,334
// iterations of 75 events.
var tenMillion = synthetic{locations: 4, iterations: 33334, rows: 30, slowFrom: 10000, slowTo: 12000}

// byteCounter counts what is written to it.
type byteCounter struct{ n int64 }

func (c *byteCounter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// The report of 10⁷ events stays within 20 MB, and a browser opens it
// without an error (when Chromium is installed). The time it takes is
// logged, not checked: BenchmarkWriteTenMillion measures it.
func TestTenMillionEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("records 10⁷ events")
	}
	files := open(t, tenMillion.record(t, t.TempDir()))
	start := time.Now()
	path := filepath.Join(t.TempDir(), "report.html")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(out, files, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d events: %.1f MiB of HTML in %v", tenMillion.events(), float64(st.Size())/(1<<20), took.Round(time.Millisecond))
	if st.Size() > 20e6 {
		t.Errorf("the page of 10⁷ events has %d bytes, more than 20 MB", st.Size())
	}
	t.Run("chromium", func(t *testing.T) {
		tracetest.Chromium(t)
		for _, frag := range []string{"", "#zoom=16&at=0.3"} {
			c := load(t, path, frag)
			t.Logf("%q: data decoded in %.0f ms, %d calls and %d tiles drawn in %.0f ms", frag, c.Timeline.DecodeMs, c.Timeline.Exact, c.Timeline.Tiles, c.Timeline.DrawMs)
		}
	})
}

// BenchmarkWriteTenMillion writes the report of a 10⁷-event trace (made
// once, not timed) and reports the page's size.
func BenchmarkWriteTenMillion(b *testing.B) {
	files := open(b, tenMillion.record(b, b.TempDir()))
	var size int64
	for b.Loop() {
		var c byteCounter
		if err := Write(&c, files, Options{}); err != nil {
			b.Fatal(err)
		}
		size = c.n
	}
	b.ReportMetric(float64(size)/1e6, "MB/page")
	b.ReportMetric(float64(tenMillion.events()), "events")
}
