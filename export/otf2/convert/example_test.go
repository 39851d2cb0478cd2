package convert_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/export/otf2/convert"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// A measured run exported as an OTF2 archive, which Vampir, Scalasca and
// otf2-print open at archive/traces.otf2.
func Example() {
	dir, err := os.MkdirTemp("", "convert-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	m, err := measure.Start(measure.Config{Output: dir, Name: "example"})
	if err != nil {
		log.Fatal(err)
	}
	solve := m.RegionAt("solve", "solve.go", 12)
	loc := m.Location("main")
	for i := 0; i < 3; i++ {
		loc.Enter(solve)
		loc.Leave(solve)
	}
	if err := m.Close(); err != nil {
		log.Fatal(err)
	}

	f, err := tracefile.Open(m.Path())
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	st, err := convert.Export(filepath.Join(dir, "archive"), []*tracefile.File{f}, otf2.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d location, %d events\n", st.Locations, st.Events)
	// Output: 1 location, 6 events
}
