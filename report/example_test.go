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
