package textname

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestShorten(t *testing.T) {
	for _, c := range []struct {
		name  string
		width int
		want  string
	}{
		{"solve", 60, "solve"},
		{"solve", 0, "solve"},
		{"randlc_", 5, "ra…c_"},
		// C++: the parameters go first, then templates, then namespaces.
		{"Kernel_3d_DGZ::LTimes(Grid_Data*)", 30, "Kernel_3d_DGZ::LTimes(…)"},
		{"std::vector<double, std::allocator<double> >::push_back(double const&)", 40, "std::vector<…>::push_back(…)"},
		{"hypre::krylov::PCG<hypre::ParVector>::Solve(hypre::ParCSRMatrix const&, hypre::ParVector&)", 15, "…::Solve(…)"},
		{"hypre::krylov::PCG<hypre::ParVector>::Solve(hypre::ParCSRMatrix const&, hypre::ParVector&)", 20, "…::PCG<…>::Solve(…)"},
		{"hypre::krylov::PCG<hypre::ParVector>::Solve(hypre::ParCSRMatrix const&, hypre::ParVector&)", 30, "…::krylov::PCG<…>::Solve(…)"},
		{"(anonymous namespace)::assemble(int, double*)", 25, "(anonymous namespace)::…"[:0] + "…::assemble(…)"},
		// OpenMP constructs keep the construct, the function and the clone.
		{"!$omp implicit barrier Kernel_3d_DGZ::LTimes(Grid_Data*) [clone ._omp_fn.0]", 60, "!$omp implicit barrier Kernel_3d_DGZ::LTimes(…) [clone ._omp_fn.0]"[:0] + "!$omp implicit barrier …::LTimes(…) [clone ._omp_fn.0]"},
		{"!$omp parallel main._omp_fn.0 @solve.c:42", 20, "!$omp…main._omp_fn.0 @solve.c:42"[:0] + "…main._omp_fn.0 @so…"},
		{"!$omp implicit barrier @jacobi.c:41", 60, "!$omp implicit barrier @jacobi.c:41"},
		// Fortran: modules demangled as namespaces.
		{"shapes::omp_loop [clone ._omp_fn.0]", 30, "…::omp_loop [clone ._omp_fn.0]"},
		{"very_long_module_name_for_physics::compute_fluxes", 20, "…::compute_fluxes"},
		// Go: the package path goes, the package stays.
		{"github.com/hmbtrace/hmbtrace/examples/heat.(*grid).step", 30, "…/examples/heat.(*grid).step"},
		{"github.com/hmbtrace/hmbtrace/examples/heat.(*grid).step", 20, "…/heat.(*grid).step"},
		// A name longer than the width keeps its beginning and end.
		{strings.Repeat("x", 100), 11, "xxxxx…xxxxx"},
		// Operators are names.
		{"ns::Matrix::operator()(int, int)", 20, "…::operator()(…)"},
		{"operator<<(std::ostream&, Foo const&)", 20, "operator<<(…)"},
	} {
		got := Shorten(c.name, c.width)
		if got != c.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.name, c.width, got, c.want)
		}
	}
}

// TestShortenKeepsOwnName checks that the function's own name survives
// every width it fits in.
func TestShortenKeepsOwnName(t *testing.T) {
	for _, c := range []struct{ name, own string }{
		{"!$omp implicit barrier Kernel_3d_DGZ::LPlusTimes(Grid_Data*) [clone ._omp_fn.0]", "LPlusTimes"},
		{"void ns::detail::apply<Op<3>, double>(Op<3> const&, double*) const", "apply"},
		{"__shapes_MOD_omp_loop", "__shapes_MOD_omp_loop"},
		{"!$omp for heat_main [clone ._omp_fn.1] @heat.f90:77", "heat_main"},
		{"main.main.func1", "func1"},
	} {
		for width := len(c.own) + 2; width <= len(c.name)+1; width++ {
			got := Shorten(c.name, width)
			if !strings.Contains(got, c.own) {
				t.Errorf("Shorten(%q, %d) = %q: lost %q", c.name, width, got, c.own)
			}
			if n := utf8.RuneCountInString(got); n > width {
				t.Errorf("Shorten(%q, %d) = %q: %d characters", c.name, width, got, n)
			}
		}
	}
}

func TestDistinct(t *testing.T) {
	for _, c := range []struct {
		names []string
		width int
		want  []string
	}{{
		// The issue's rows: four barriers that a middle cut made equal.
		names: []string{
			"!$omp implicit barrier Kernel_3d_DGZ::LTimes(Grid_Data*) [clone ._omp_fn.0]",
			"!$omp implicit barrier Kernel_3d_DGZ::LPlusTimes(Grid_Data*) [clone ._omp_fn.0]",
			"!$omp implicit barrier Kernel_3d_DGZ::scattering(Grid_Data*) [clone ._omp_fn.0]",
			"!$omp implicit barrier Kernel_3d_DGZ::source(Grid_Data*) [clone ._omp_fn.0]",
		},
		width: 60,
		want: []string{
			"!$omp implicit barrier …::LTimes(…) [clone ._omp_fn.0]",
			"!$omp implicit barrier …::LPlusTimes(…) [clone ._omp_fn.0]",
			"!$omp implicit barrier …::scattering(…) [clone ._omp_fn.0]",
			"!$omp implicit barrier …::source(…) [clone ._omp_fn.0]",
		},
	}, {
		// Overloads: the parameters come back.
		names: []string{"solver::apply(double*, int)", "solver::apply(float*, int)", "solver::apply(double*, int)"},
		width: 20,
		want:  []string{"…apply(double*, int)", "…apply(float*, int)", "…apply(double*, int)"},
	}, {
		// The same method of two classes: the class stays where it fits.
		names: []string{"ns::Grid::update(int)", "ns::Field::update(int)", "ns::Mesh::update(int)"},
		width: 18,
		want:  []string{"…::Grid::update(…)", "…::update(…)", "…::Mesh::update(…)"},
	}, {
		names: []string{"ns::Field::update(int)", "ns::Force::update(int)"},
		width: 18,
		want:  []string{"…::Field…update(…)", "…::Force…update(…)"},
	}, {
		// Outlined bodies that differ only in the clone number.
		names: []string{
			"compute<very_long_template_argument_one, very_long_template_argument_two>(int) [clone ._omp_fn.0]",
			"compute<very_long_template_argument_one, very_long_template_argument_two>(int) [clone ._omp_fn.1]",
		},
		width: 40,
		want:  []string{"compute<…>(…) [clone ._omp_fn.0]", "compute<…>(…) [clone ._omp_fn.1]"},
	}, {
		// Names that differ only where no width shows them are numbered.
		names: []string{strings.Repeat("a", 30) + "1" + strings.Repeat("b", 30), strings.Repeat("a", 30) + "2" + strings.Repeat("b", 30)},
		width: 11,
		want:  []string{"aaaaa…bbbbb #1", "aaaaa…bbbbb #2"},
	}} {
		got := Distinct(c.names, c.width)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("Distinct(%q, %d) =\n%q\nwant\n%q", c.names, c.width, got, c.want)
		}
		seen := map[string]string{}
		for i, g := range got {
			if n, ok := seen[g]; ok && n != c.names[i] {
				t.Errorf("Distinct: %q and %q both show as %q", n, c.names[i], g)
			}
			seen[g] = c.names[i]
		}
	}
}

func ExampleDistinct() {
	names := []string{
		"!$omp implicit barrier Kernel_3d_DGZ::LTimes(Grid_Data*) [clone ._omp_fn.0]",
		"!$omp implicit barrier Kernel_3d_DGZ::LPlusTimes(Grid_Data*) [clone ._omp_fn.0]",
		"Kernel_3d_DGZ::LTimes(Grid_Data*)",
	}
	for _, s := range Distinct(names, 60) {
		fmt.Println(s)
	}
	// Output:
	// !$omp implicit barrier …::LTimes(…) [clone ._omp_fn.0]
	// !$omp implicit barrier …::LPlusTimes(…) [clone ._omp_fn.0]
	// Kernel_3d_DGZ::LTimes(Grid_Data*)
}

// FuzzDistinct checks that Distinct never panics, keeps equal names
// equal and different names different, at any width.
func FuzzDistinct(f *testing.F) {
	f.Add("!$omp implicit barrier a::f(int) [clone ._omp_fn.0]", "!$omp implicit barrier a::g(int) [clone ._omp_fn.0]", 20)
	f.Add("operator<<(std::ostream&)", "operator()(int)", 5)
	f.Add("f<(<)>", "f(<)>)", 3)
	f.Fuzz(func(t *testing.T, a, b string, width int) {
		width %= 200
		got := Distinct([]string{a, b, a}, width)
		if got[0] != got[2] {
			t.Errorf("Distinct(%q, %q, %q, %d) = %q: the same name twice differently", a, b, a, width, got)
		}
		if (a == b) != (got[0] == got[1]) {
			t.Errorf("Distinct(%q, %q, %d) = %q", a, b, width, got)
		}
	})
}

// TestShortenHugeName checks that a generated name of a megabyte with
// many qualifiers is shortened in linear time, not one pass per qualifier.
func TestShortenHugeName(t *testing.T) {
	name := strings.Repeat("ns::", 1<<18) + "f(int)"
	got := Shorten(name, 60)
	if !strings.HasSuffix(got, "f(…)") || utf8.RuneCountInString(got) > 60 {
		t.Errorf("Shorten of %d bytes = %q", len(name), got)
	}
}

// TestDistinctClasses: the same method of classes whose names differ at
// their end keeps the class's end when the names clash.
func TestDistinctClasses(t *testing.T) {
	names := []string{
		"!$omp implicit barrier Kernel_3d_DGZ::LTimes(Grid_Data*) [clone ._omp_fn.0]",
		"!$omp implicit barrier Kernel_3d_GZD::LTimes(Grid_Data*) [clone ._omp_fn.0]",
	}
	got := Distinct(names, 60)
	if got[0] == got[1] || !strings.Contains(got[0], "DGZ::LTimes(") || !strings.Contains(got[1], "GZD::LTimes(") || !strings.HasPrefix(got[0], "!$omp implicit") {
		t.Errorf("Distinct(%q) = %q", names, got)
	}
	for _, g := range got {
		if n := utf8.RuneCountInString(g); n > 60 {
			t.Errorf("%q: %d characters", g, n)
		}
	}
}

func ExampleShorten() {
	name := "hypre::krylov::PCG<hypre::ParVector>::Solve(hypre::ParCSRMatrix const&, hypre::ParVector&)"
	for _, width := range []int{60, 30, 15} {
		fmt.Println(Shorten(name, width))
	}
	// Output:
	// hypre::krylov::PCG<hypre::ParVector>::Solve(…)
	// …::krylov::PCG<…>::Solve(…)
	// …::Solve(…)
}

// BenchmarkDistinct times the summary's naming of 10^5 regions: names
// that fit (the common case, no bookkeeping) and C++ names that all need
// shortening.
func BenchmarkDistinct(b *testing.B) {
	for _, c := range []struct{ name, format string }{
		{"short", "region_%d"},
		{"cxx", "ns::detail::Kernel_%d<double, std::allocator<double> >::apply(Grid_Data*, int) [clone ._omp_fn.0]"},
	} {
		names := make([]string, 100_000)
		for i := range names {
			names[i] = fmt.Sprintf(c.format, i)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Distinct(names, 60)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/name")
		})
	}
}
