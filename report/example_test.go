package report_test

import (
	"bytes"
	"fmt"
	"log"
	"os"

	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/report"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// Write the report of a trace: one HTML page that opens from disk.
func ExampleWrite() {
	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	m, err := measure.Start(measure.Config{Output: dir, Name: "example"})
	if err != nil {
		log.Fatal(err)
	}
	step, solve := m.Region("step"), m.Region("solve")
	loc := m.Location("main")
	for range 100 {
		loc.Enter(step)
		loc.Enter(solve)
		loc.Leave(solve)
		loc.Leave(step)
	}
	if err := m.Close(); err != nil {
		log.Fatal(err)
	}

	f, err := tracefile.Open(m.Path())
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	var page bytes.Buffer // or an *os.File
	if err := report.Write(&page, []*tracefile.File{f}, report.Options{Title: "example"}); err != nil {
		log.Fatal(err)
	}
	for _, section := range []string{"facts", "profile", "timeline", "variation", "dynamics", "communication", "counters"} {
		fmt.Println(section, bytes.Contains(page.Bytes(), []byte(`<section id="`+section+`">`)))
	}
	// Output:
	// facts true
	// profile true
	// timeline true
	// variation true
	// dynamics true
	// communication true
	// counters true
}

// Draw a run of many locations as groups: here 8 workers of one process,
// each two rows deep, in at most 4 rows, so 2 groups of 4 workers.
func ExampleOptions_rows() {
	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	m, err := measure.Start(measure.Config{Output: dir, Name: "workers"})
	if err != nil {
		log.Fatal(err)
	}
	step, solve := m.Region("step"), m.Region("solve")
	for w := range 8 {
		loc := m.Location(fmt.Sprintf("worker %d", w))
		for range 10 {
			loc.Enter(step)
			loc.Enter(solve)
			loc.Leave(solve)
			loc.Leave(step)
		}
	}
	if err := m.Close(); err != nil {
		log.Fatal(err)
	}

	f, err := tracefile.Open(m.Path())
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	var page bytes.Buffer
	if err := report.Write(&page, []*tracefile.File{f}, report.Options{Rows: 4}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(bytes.Contains(page.Bytes(), []byte("8 locations shown as 2 groups of 4")))
	// Output:
	// true
}
