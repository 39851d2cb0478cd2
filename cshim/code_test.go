package cshim

import (
	"path/filepath"
	"testing"
)

// TestCodeAt names code inside a function: the function that holds it,
// and the line of the address itself, which moves on through the body
// while Lookup's stays at the entry.
func TestCodeAt(t *testing.T) {
	s, funcs := symTarget(t, "pie")
	entry := funcs["main.main"]
	first, ok := s.CodeAt(entry)
	if !ok || first.Name != "main.main" || filepath.Base(first.File) != "main.go" || first.Line == 0 {
		t.Fatalf("CodeAt(main.main's entry) = %+v, %v; want main.main at main.go:<line>", first, ok)
	}
	later := 0
	for a := entry; a < entry+256; a++ {
		sym, ok := s.CodeAt(a)
		if !ok || sym.Name != "main.main" {
			break // past the function's end
		}
		if fn, _ := s.Lookup(a); fn.Line != first.Line {
			t.Fatalf("Lookup(%#x) at line %d, want the entry's %d", a, fn.Line, first.Line)
		}
		if sym.Line > first.Line {
			later = sym.Line
			break
		}
	}
	if later == 0 {
		t.Errorf("no address of main.main after its entry has a later line than %d", first.Line)
	}
	if sym, ok := s.CodeAt(8); ok {
		t.Errorf("CodeAt(8) = %+v, want nothing", sym)
	}
}
