package otf2_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/hmbtrace/hmbtrace/export/otf2"
)

// An archive with one process, one thread and a call of main: definitions,
// a streaming event writer per location, and Close to write the rest.
func Example() {
	dir, err := os.MkdirTemp("", "otf2-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	a, err := otf2.Create(filepath.Join(dir, "trace"), otf2.Options{Creator: "example"})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Abort() // removes the partial archive on any error path; no-op after Close

	node, _ := a.SystemTreeNode("localhost", "machine", otf2.NoParent)
	proc, _ := a.LocationGroup("Process 0", node)
	main, _ := a.Region(otf2.RegionDef{Name: "main", File: "main.go", BeginLine: 10,
		Role: otf2.RoleFunction, Paradigm: otf2.ParadigmUser})
	w, err := a.Location("Master thread", proc)
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Enter(1000, main); err != nil {
		log.Fatal(err)
	}
	if err := w.Leave(1750, main); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	first, last, _ := a.TimeRange()
	if err := a.ClockProperties(1e9, first, last-first+1); err != nil {
		log.Fatal(err)
	}
	if err := a.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(a.AnchorPath()), w.Events(), "events")
	// Output: traces.otf2 2 events
}
