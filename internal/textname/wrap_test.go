package textname

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		lead  string
		items []string
		width int
		want  string
	}{
		{"Sync: ", nil, 20, "Sync: "},
		{"Sync: ", []string{`"a"`, `"b"`}, 20, `Sync: "a", "b"`},
		{"Sync: ", []string{`"MPI_Allreduce"`, `"MPI_Waitall"`, `"MPI_Barrier"`}, 28, "Sync: \"MPI_Allreduce\",\n  \"MPI_Waitall\",\n  \"MPI_Barrier\""},
		{"Sync: ", []string{`"MPI_Allreduce"`, `"MPI_Waitall"`, `"MPI_Barrier"`}, 0, `Sync: "MPI_Allreduce", "MPI_Waitall", "MPI_Barrier"`},
		{"", []string{strings.Repeat("x", 30), "y"}, 10, strings.Repeat("x", 30) + ",\n  y"},
	} {
		if got := Wrap(c.lead, c.items, c.width, "  "); got != c.want {
			t.Errorf("Wrap(%q, %q, %d) = %q, want %q", c.lead, c.items, c.width, got, c.want)
		}
	}
	// A long list: every line within the width, every item once.
	var items []string
	for i := range 1000 {
		items = append(items, fmt.Sprintf(`"hypre_region_%d"`, i))
	}
	got := Wrap("Synchronization regions: ", items, 100, "  ")
	for _, line := range strings.Split(got, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Fatalf("a line of %d characters: %q", n, line)
		}
	}
	if strings.Count(got, "hypre_region_") != len(items) {
		t.Errorf("Wrap lost items:\n%s", got)
	}
}

func ExampleWrap() {
	fmt.Println(Wrap("Synchronization regions: ", []string{`"MPI_Allreduce"`, `"MPI_Waitall"`, `"MPI_Barrier"`, `"!$omp implicit barrier @cg.c:41"`}, 60, "  "))
	// Output:
	// Synchronization regions: "MPI_Allreduce", "MPI_Waitall",
	//   "MPI_Barrier", "!$omp implicit barrier @cg.c:41"
}
