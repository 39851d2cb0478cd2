package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// The communication section of a run whose buffer shed messages takes the
// counts from the exact matrices and says the shed messages are counted.
func TestCommSectionCountsShedMessages(t *testing.T) {
	dir := t.TempDir()
	var files []*tracefile.File
	for rank := 0; rank < 2; rank++ {
		m, err := measure.Start(measure.Config{Output: dir, Name: "shed", Rank: rank, BufferSize: 16 << 10, BinSize: 512})
		if err != nil {
			t.Fatal(err)
		}
		regions := make([]measure.Region, 6)
		for i := range regions {
			regions[i] = m.Region(fmt.Sprintf("level%d", i))
		}
		l := m.Location("main")
		for it := 0; it < 2000; it++ {
			for _, r := range regions {
				l.Enter(r)
			}
			l.SendRank(1-rank, 0, 100)
			l.RecvRank(1-rank, 0, 100)
			for j := len(regions) - 1; j >= 0; j-- {
				l.Leave(regions[j])
			}
		}
		files = append(files, tracetest.Finish(t, m))
	}
	var out bytes.Buffer
	if err := Write(&out, files, Options{}); err != nil {
		t.Fatal(err)
	}
	html := out.String()
	i := strings.Index(html, `id="communication"`)
	if i < 0 {
		t.Fatal("no communication section")
	}
	sec := html[i:]
	sec = sec[:strings.Index(sec, "</section>")]
	for _, want := range []string{"4,000 messages", "the matrix counts their messages, exactly"} {
		if !strings.Contains(sec, want) {
			t.Errorf("communication section lacks %q:\n%.2000s", want, sec)
		}
	}
}
