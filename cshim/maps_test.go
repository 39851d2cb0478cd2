package cshim

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const sampleMaps = `55d0c6a00000-55d0c6a01000 r--p 00000000 08:01 1234                       /usr/bin/prog
55d0c6a01000-55d0c6a02000 r-xp 00001000 08:01 1234                       /usr/bin/prog
55d0c7000000-55d0c7021000 rw-p 00000000 00:00 0                          [heap]
7f3a1c000000-7f3a1c021000 rw-p 00000000 00:00 0 
7f3a1d028000-7f3a1d1bd000 r-xp 00028000 08:01 5678                       /opt/my libs/libx.so (deleted)
7ffd5e9f2000-7ffd5e9f4000 r-xp 00000000 00:00 0                          [vdso]
`

func TestParseMaps(t *testing.T) {
	got, err := ParseMaps([]byte(sampleMaps))
	if err != nil {
		t.Fatal(err)
	}
	want := []Mapping{
		{0x55d0c6a00000, 0x55d0c6a01000, "r--p", 0, "/usr/bin/prog"},
		{0x55d0c6a01000, 0x55d0c6a02000, "r-xp", 0x1000, "/usr/bin/prog"},
		{0x55d0c7000000, 0x55d0c7021000, "rw-p", 0, "[heap]"},
		{0x7f3a1c000000, 0x7f3a1c021000, "rw-p", 0, ""},
		{0x7f3a1d028000, 0x7f3a1d1bd000, "r-xp", 0x28000, "/opt/my libs/libx.so (deleted)"},
		{0x7ffd5e9f2000, 0x7ffd5e9f4000, "r-xp", 0, "[vdso]"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

func TestParseMapsErrors(t *testing.T) {
	for _, tc := range []struct{ line, err string }{
		{"55d0c6a00000 r--p 00000000 08:01 1 /x", "maps line 2: address range \"55d0c6a00000\": want start-end"},
		{"zz-10 r--p 00000000 08:01 1 /x", "maps line 2: start address \"zz\": not hexadecimal"},
		{"10-zz r--p 00000000 08:01 1 /x", "maps line 2: end address \"zz\": not hexadecimal"},
		{"20-10 r--p 00000000 08:01 1 /x", "maps line 2: address range \"20-10\" ends before it starts"},
		{"10-20 r-p 00000000 08:01 1 /x", "maps line 2: permissions \"r-p\": want four characters such as r-xp"},
		{"10-20 r--p 0x0 08:01 1 /x", "maps line 2: offset \"0x0\": not hexadecimal"},
		{"10-20 r--p 00000000", "maps line 2: device missing"},
		{"10-20 r--p 00000000 08:01", "maps line 2: inode missing"},
		{"10-20 r--p 00000000 08:01 x1 /x", "maps line 2: inode \"x1\": not a number"},
	} {
		_, err := ParseMaps([]byte("10-20 r--p 00000000 08:01 1 /ok\n" + tc.line + "\n"))
		if err == nil || err.Error() != tc.err {
			t.Errorf("%q: error %v, want %s", tc.line, err, tc.err)
		}
	}
}

// formatMaps writes mappings back in the kernel's format.
func formatMaps(maps []Mapping) string {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "%x-%x %s %08x 00:00 0 %s\n", m.Start, m.End, m.Perms, m.Offset, m.Path)
	}
	return b.String()
}

func FuzzParseMaps(f *testing.F) {
	f.Add([]byte(sampleMaps))
	f.Add([]byte("10-20 r--p 00000000 08:01 1 /x\n"))
	f.Add([]byte("ffffffffffffffff-ffffffffffffffff ---p ffffffff 00:00 0\n\n"))
	f.Add([]byte("10-20 r--p 00000000 08:01 1 \t/x y\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		maps, err := ParseMaps(data)
		if err != nil {
			return
		}
		for _, m := range maps {
			if m.End < m.Start || len(m.Perms) != 4 {
				t.Fatalf("accepted %+v", m)
			}
		}
		// What was accepted reads back the same once formatted; paths
		// lose only their surrounding blanks, and a path of blanks and
		// permissions with blanks cannot be formatted back.
		for _, m := range maps {
			if strings.ContainsAny(m.Perms, " \t\n") {
				return
			}
		}
		again, err := ParseMaps([]byte(formatMaps(maps)))
		if err != nil {
			t.Fatalf("formatted %q: %v", formatMaps(maps), err)
		}
		if len(again) != len(maps) {
			t.Fatalf("formatted %q: %d mappings, want %d", formatMaps(maps), len(again), len(maps))
		}
		for i := range maps {
			if again[i] != maps[i] {
				t.Fatalf("formatted %q: %+v, want %+v", formatMaps(maps), again[i], maps[i])
			}
		}
	})
}
