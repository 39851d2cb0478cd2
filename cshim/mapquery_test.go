package cshim

import (
	"os"
	"reflect"
	"testing"
)

// TestQueryMapping: the kernel's answer for an address of this test's code
// is the line of /proc/self/maps that holds it; no mapping holds address
// 0; a file that is not procfs's cannot answer.
func TestQueryMapping(t *testing.T) {
	addr := uint64(reflect.ValueOf(TestQueryMapping).Pointer())
	got, found, supported := queryMapping("/proc/self/maps", addr)
	if !supported {
		t.Skip("the kernel has no PROCMAP_QUERY (Linux 6.11): /proc/self/maps is read")
	}
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := ParseMaps(data)
	if err != nil {
		t.Fatal(err)
	}
	var want Mapping
	for _, m := range maps {
		if m.Start <= addr && addr < m.End {
			want = m
		}
	}
	if !found || got != want {
		t.Errorf("query of %#x: %+v (found %v), want the maps line %+v", addr, got, found, want)
	}
	if _, found, _ := queryMapping("/proc/self/maps", 0); found {
		t.Error("a mapping holds address 0")
	}
	file := t.TempDir() + "/maps"
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, supported := queryMapping(file, addr); supported {
		t.Error("a regular file answered the query")
	}
}

// TestInsertMapping: a queried mapping goes into its place by address and
// replaces the stale ones it overlaps.
func TestInsertMapping(t *testing.T) {
	maps := []Mapping{{Start: 0x1000, End: 0x2000}, {Start: 0x3000, End: 0x5000, Path: "/old"}, {Start: 0x8000, End: 0x9000}}
	got := insertMapping(maps, Mapping{Start: 0x4000, End: 0x6000, Path: "/new"})
	want := []Mapping{{Start: 0x1000, End: 0x2000}, {Start: 0x4000, End: 0x6000, Path: "/new"}, {Start: 0x8000, End: 0x9000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	got = insertMapping(nil, Mapping{Start: 0x10, End: 0x20})
	if len(got) != 1 || got[0].Start != 0x10 {
		t.Errorf("into no mappings: %+v", got)
	}
	if maps[1].Path != "/old" {
		t.Error("insertMapping changed the slice it was given")
	}
}
