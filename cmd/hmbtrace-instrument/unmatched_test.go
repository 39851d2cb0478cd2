package main

import "testing"

func TestLinkOutput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"x.o", "-o", "prog"}, "prog"},
		{[]string{"-oprog", "x.o"}, "prog"},
		{[]string{"x.o", "y.o"}, "a.out"},
		{[]string{"-o", "first", "x.o", "-o", "last"}, "last"}, // the driver takes the last
	} {
		if got := linkOutput(c.args); got != c.want {
			t.Errorf("linkOutput(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
