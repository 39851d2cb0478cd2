package render

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestQuoteList checks the one list quoter that the variation, score and
// dynamics texts share: Go quoting, comma-separated, "" for no names.
func TestQuoteList(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"MPI_Barrier"}, `"MPI_Barrier"`},
		{[]string{"a, b", "q\"\t\xff", "ü"}, `"a, b", "q\"\t\xff", "ü"`},
	} {
		if got := quoteList(tc.in); got != tc.want {
			t.Errorf("quoteList(%q) = %s; want %s", tc.in, got, tc.want)
		}
	}
}

// TestQuoteLines: a hypre-sized list of synchronisation regions (9,707
// characters on one line before) wraps within listWidth, every name once.
func TestQuoteLines(t *testing.T) {
	var names []string
	for i := range 400 {
		names = append(names, fmt.Sprintf("hypre_ParCSRCommHandleDestroy_%d", i))
	}
	got := quoteLines("Synchronization regions: ", names)
	lines := strings.Split(got, "\n")
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > listWidth {
			t.Fatalf("a line of %d characters: %q", n, l)
		}
	}
	if len(lines) < 100 || strings.Count(got, `"hypre_ParCSRCommHandleDestroy_`) != len(names) || !strings.HasPrefix(got, `Synchronization regions: "hypre_`) {
		t.Errorf("quoteLines: %d lines\n%s", len(lines), got)
	}
	if got := quoteLines("Sync: ", []string{"MPI_Barrier"}); got != `Sync: "MPI_Barrier"` {
		t.Errorf("a short list: %q", got)
	}
}
