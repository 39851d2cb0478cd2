package render

import "testing"

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
