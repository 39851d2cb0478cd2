package measure

import (
	"fmt"
	"testing"
)

// A Region is an index into its measurement's table: one from another
// measurement, or any id past the table, must never index out of range or
// write a record that names no region. Every probe that takes a Region
// drops such a probe and counts it (UsageErrors.UnknownRegion); the stream
// around it stays intact.
func TestRegionOfAnotherMeasurement(t *testing.T) {
	if !ProbesCompiledIn {
		t.Skip("probes compiled out")
	}
	other := startTest(t, Config{Name: "other"})
	var foreign []Region
	for i := range 200 { // past this measurement's first profile pages
		foreign = append(foreign, other.Region(fmt.Sprintf("r%d", i)))
	}
	defer other.Close()

	m := startTest(t, Config{})
	a := m.Region("a")
	p := m.IntParam("n")
	loc := m.Location("main")
	ids := []Region{foreign[len(foreign)-1], foreign[100], 1 << 20, 1<<31 + 5, ^Region(0)}
	loc.Enter(a)
	probes := 0
	for _, r := range ids {
		loc.Enter(r)
		loc.Leave(r)
		loc.EnterAt(r, m.Now())
		loc.LeaveAt(r, m.Now())
		loc.EnterInt(r, p, 7)
		loc.EnterCollective(r, 0, 8)
		loc.EnterCollectiveCommAt(r, 0, 8, 8, 0, m.Now())
		loc.CollectiveComplete(r, 0, 8, 8, 0, 1)
		probes += 6 // the five enters and the completion
	}
	loc.Leave(a)
	loc.Done()
	m.SetPhase(foreign[150]) // no such region here: ignored
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Each leave finds a open: not the region it names.
	want := UsageErrors{UnknownRegion: uint64(probes), LeaveNotOpen: uint64(2 * len(ids))}
	if got := m.Stats().Usage; got != want {
		t.Errorf("usage errors %+v, want %+v", got, want)
	}
	f := openTrace(t, m)
	if got, want := eventLine(t, f), "ENTER a 1, LEAVE a 1"; got != want {
		t.Errorf("events\n %s\nwant\n %s", got, want)
	}
	for _, l := range f.Locations {
		for _, pe := range l.Profile {
			if f.RegionName(pe.Region) != "a" {
				t.Errorf("profile holds region %d (%q)", pe.Region, f.RegionName(pe.Region))
			}
		}
	}
}
