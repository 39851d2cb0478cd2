package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/filter"
)

func rewriteOne(t *testing.T, pkg, src string, opt options) fileResult {
	t.Helper()
	res, err := rewritePackage(pkg, []*fileInput{{path: "/src/a.go", name: "/src/a.go", src: []byte(src)}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.ParseFile(token.NewFileSet(), "a.go", res[0].src, 0); err != nil {
		t.Fatalf("the rewritten file does not parse: %v\n%s", err, res[0].src)
	}
	return res[0]
}

func siteNames(r fileResult) []string {
	var n []string
	for _, s := range r.sites {
		n = append(n, s.name)
	}
	return n
}

// The names are those runtime.FuncForPC printed for testdata/names.go.txt
// built with -gcflags=-l (closures not inlined, as instrumented ones are not).
func TestRewriteNames(t *testing.T) {
	src, err := os.ReadFile("testdata/names.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := rewriteOne(t, "main", string(src), options{tiny: true})
	want := []string{
		"main.name", "main.init.func1", "main.init.func2", "main.(*L[...]).Push", "main.Map[...]",
		"main.init.0", "main.init.1.func1", "main.init.1",
		"main.F.func1.1", "main.F.func1.2", "main.F.func1", "main.F.func2", "main.F.func3", "main.F.func4", "main.F.func5", "main.F",
		"main.main",
	}
	if got := siteNames(r); !reflect.DeepEqual(got, want) {
		t.Errorf("sites:\n got %q\nwant %q", got, want)
	}
	for _, s := range r.sites {
		if s.file != "/src/a.go" || s.line <= 0 {
			t.Errorf("%s at %s:%d", s.name, s.file, s.line)
		}
	}
	// No line moves: the declarations are appended after the last line.
	orig := bytes.Count(src, []byte("\n"))
	body := r.src[:bytes.Index(r.src, []byte("\nvar __hmb_site_"))]
	if got := bytes.Count(body, []byte("\n")); got != orig {
		t.Errorf("the rewritten file has %d lines before its declarations, the original %d", got, orig)
	}
	if !bytes.Contains(r.src, []byte("func main() {defer __hmb_auto.Close();/*line :37:14*/defer __hmb_auto.Enter(")) {
		t.Errorf("main.main does not close the measurement first:\n%s", r.src)
	}
}

func TestRewriteMethodNames(t *testing.T) {
	src := `package p
type T struct{}
type G[K comparable, V any] struct{}
func (T) A() { println() }
func (t *T) B() { println() }
func (g G[K, V]) C() { println() }
func (g *G[K, V]) D() { println() }
func _() { println() }
`
	r := rewriteOne(t, "example.com/m/p", src, options{})
	want := []string{"example.com/m/p.T.A", "example.com/m/p.(*T).B", "example.com/m/p.G[...].C", "example.com/m/p.(*G[...]).D"}
	if got := siteNames(r); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRewriteSkips(t *testing.T) {
	src := `package p

//go:nosplit
func ns() { println() }

//go:noinline
func ni() { println() }

func leaf(a, b int) int { return min(a, b) + len("x") }

func loop(n int) (s int) { for i := range n { s += i }; return }

func asm(x int) int
`
	r := rewriteOne(t, "p", src, options{})
	if got, want := siteNames(r), []string{"p.ni", "p.loop"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q (skipped: %q)", got, want, r.skipped)
	}
	r = rewriteOne(t, "p", src, options{tiny: true})
	if got, want := siteNames(r), []string{"p.ni", "p.leaf", "p.loop"}; !reflect.DeepEqual(got, want) {
		t.Errorf("with tiny: got %q, want %q", got, want)
	}
	if r := rewriteOne(t, "p", "package p\nfunc f() int { return 1 }\n", options{}); r.changed {
		t.Errorf("a file with nothing instrumented changed:\n%s", r.src)
	}
}

// The filter file `hmbtrace score -g` writes for Go names (with their
// '*', '[' and ... escaped) drops exactly those functions.
func TestRewriteScoreFilter(t *testing.T) {
	var b bytes.Buffer
	if err := filter.Write(&b, []string{"p.(*T).M", "p.G[...].N"}, "test"); err != nil {
		t.Fatal(err)
	}
	f, err := filter.Parse("score.filter", &b)
	if err != nil {
		t.Fatal(err)
	}
	src := `package p
type T struct{}
type G[X any] struct{}
func (*T) M() { println() }
func (T) M2() { println() }
func (G[X]) N() { println() }
func (G[X]) N2() { println() }
`
	r := rewriteOne(t, "p", src, options{filter: f})
	if got, want := siteNames(r), []string{"p.T.M2", "p.G[...].N2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRewriteRedirects(t *testing.T) {
	src := `package main

import (
	"log"
	sys "os"
)

func a() { sys.Exit(3) }
func b() { log.Fatalf("x %d", 1); log.Println("kept"); log.Panic("kept") }
func c() { exit := sys.Exit; exit(1) }
func d() { var sys struct{ Exit func(int) }; sys.Exit(1) }
`
	r := rewriteOne(t, "main", src, options{tiny: true})
	s := regexp.MustCompile(`/\*line :\d+:\d+\*/`).ReplaceAllString(string(r.src), "")
	for _, want := range []string{"__hmb_auto.Exit(3)", `__hmb_auto.Fatalf("x %d", 1)`, "exit := __hmb_auto.Exit;", `log.Println("kept")`, `log.Panic("kept")`, "sys.Exit(1) }"} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
}

func TestRewriteKeepsColumns(t *testing.T) {
	src := "package p\n\nfunc f() { x := 1; println(x) }\n"
	r := rewriteOne(t, "p", src, options{tiny: true})
	want := "func f() {defer __hmb_auto.Enter(__hmb_site_0_0).End();/*line :3:11*/ x := 1; println(x) }"
	if !strings.Contains(string(r.src), want) {
		t.Errorf("want %q in\n%s", want, r.src)
	}
}

// Small functions that call only intrinsics and other small functions of
// the package are left to the inliner; recursion, calls into other
// packages and calls of function values are not small.
func TestRewriteInlinable(t *testing.T) {
	src := `package v

import (
	"fmt"
	m "math"
)

type Vector struct{ X, Y, Z float64 }

func (a Vector) Length() float64 { return m.Sqrt(a.Dot(a)) }
func (a Vector) Dot(b Vector) float64 { return a.X*b.X + a.Y*b.Y + a.Z*b.Z }
func (a Vector) Normalize() Vector { d := a.Length(); return Vector{a.X / d, a.Y / d, a.Z / d} }
func scale(a Vector, f float64) Vector { return Vector(a).mul(f) }
func (a Vector) mul(f float64) Vector { return Vector{a.X * f, a.Y * f, a.Z * f} }
func show(a Vector) { fmt.Println(a) }
func fact(n int) int { if n < 2 { return 1 }; return n * fact(n-1) }
func apply(f func(int) int, x int) int { return f(x) }
func big(a Vector) Vector {
	return a.Normalize().Normalize().Normalize().Normalize().Normalize().Normalize()
}
`
	r := rewriteOne(t, "v", src, options{})
	if got, want := siteNames(r), []string{"v.show", "v.fact", "v.apply", "v.big"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q (skipped: %q)", got, want, r.skipped)
	}
}

// The go command's generated test main gets its os.Exit redirected, so
// that go test writes the trace, and no probe.
func TestRewriteTestMain(t *testing.T) {
	src := `package main

import (
	"os"
	"testing"
)

func main() {
	m := testing.MainStart(nil, nil, nil, nil, nil)
	os.Exit(m.Run())
}
`
	res, err := rewritePackage("main", []*fileInput{{path: "/w/b001/_testmain.go", name: "_testmain.go", src: []byte(src), redirectOnly: true}}, options{tiny: true})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if len(r.sites) != 0 || bytes.Contains(r.src, []byte("Close()")) {
		t.Errorf("the test main got probes:\n%s", r.src)
	}
	if !bytes.Contains(r.src, []byte("__hmb_auto.Exit/*line :10:9*/(m.Run())")) {
		t.Errorf("os.Exit is not redirected:\n%s", r.src)
	}
}
