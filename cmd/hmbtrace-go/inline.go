package main

import (
	"go/ast"
	"go/token"
	"strconv"
)

// A probe is a deferred call, and a function with a defer is never
// inlined; in a small function it also costs more than the work. So, unless
// -tiny says otherwise, hmbtrace-go leaves alone the functions the compiler
// would inline anyway, as far as the syntax tells: small bodies that call
// nothing but builtins, conversions, intrinsics (math.Sqrt, ...) and other
// such small functions of the package, with no loop, closure, defer, go,
// select, panic or recover, and no call of a function value. It guesses the compiler's inlining cost by counting
// syntax nodes, the callees' included; the compiler's budget is 80 of its
// own nodes, which count about as go/ast's do.
const inlineBudget = 80

// intrinsics are the standard library's functions the compiler turns into
// an instruction or a few, which keep the caller inlinable.
var intrinsics = map[string]map[string]bool{
	"math": {"Sqrt": true, "Abs": true, "Floor": true, "Ceil": true, "Trunc": true, "Round": true,
		"RoundToEven": true, "FMA": true, "Copysign": true, "Float64bits": true, "Float64frombits": true,
		"Float32bits": true, "Float32frombits": true, "Signbit": true, "Inf": true, "NaN": true, "IsNaN": true, "IsInf": true,
		"Min": true, "Max": true},
	"math/bits": {"LeadingZeros": true, "LeadingZeros64": true, "LeadingZeros32": true, "TrailingZeros": true,
		"TrailingZeros64": true, "TrailingZeros32": true, "OnesCount": true, "OnesCount64": true, "OnesCount32": true,
		"RotateLeft": true, "RotateLeft64": true, "RotateLeft32": true, "ReverseBytes64": true, "ReverseBytes32": true,
		"Len": true, "Len64": true, "Len32": true, "Add64": true, "Sub64": true, "Mul64": true},
}

// builtins are the predeclared functions and types whose calls cost
// nothing to inline.
var builtins = map[string]bool{
	"append": true, "cap": true, "clear": true, "complex": true, "copy": true, "delete": true,
	"imag": true, "len": true, "make": true, "max": true, "min": true, "new": true, "real": true,
	"bool": true, "byte": true, "rune": true, "string": true, "int": true, "int8": true, "int16": true,
	"int32": true, "int64": true, "uint": true, "uint8": true, "uint16": true, "uint32": true,
	"uint64": true, "uintptr": true, "float32": true, "float64": true, "complex64": true, "complex128": true,
}

// body is what the estimate knows of one function body.
type body struct {
	nodes   int
	hairy   bool     // something that keeps it from being inlined
	calls   []string // package functions ("F") and methods (".M") it calls
	state   int8     // 0 not judged, 1 being judged, 2 judged
	cost    int      // with its callees', once judged
	inlines bool
}

// inlining estimates which functions of a package the compiler inlines.
type inlining struct {
	bodies  map[*ast.BlockStmt]*body // every function's and closure's
	funcs   map[string]*body         // package functions by name
	methods map[string][]*body       // methods by name, of any type
	types   map[string]bool          // the package's type names: conversions
}

func newInlining() *inlining {
	return &inlining{bodies: map[*ast.BlockStmt]*body{}, funcs: map[string]*body{}, methods: map[string][]*body{}, types: map[string]bool{}}
}

// addFile records the functions, closures and types of one file of the
// package. All files are added before any is judged.
func (in *inlining) addFile(f *ast.File) {
	imports := map[string]string{} // local name -> path
	for _, is := range f.Imports {
		if p, err := strconv.Unquote(is.Path.Value); err == nil {
			if n := importName(f, p); n != "" {
				imports[n] = p
			}
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok == token.TYPE {
				for _, s := range d.Specs {
					in.types[s.(*ast.TypeSpec).Name.Name] = true
				}
			}
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			b := in.scan(d.Body, imports)
			if blockingDirective(d.Doc) != "" || hasDirective(d.Doc, "//go:noinline") {
				b.hairy = true
			}
			if d.Recv != nil {
				in.methods[d.Name.Name] = append(in.methods[d.Name.Name], b)
			} else if d.Name.Name != "init" {
				in.funcs[d.Name.Name] = b
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.FuncLit); ok {
			in.scan(lit.Body, imports)
		}
		return true
	})
}

func hasDirective(doc *ast.CommentGroup, d string) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if c.Text == d {
			return true
		}
	}
	return false
}

// scan counts a body's nodes and notes its calls.
func (in *inlining) scan(b *ast.BlockStmt, imports map[string]string) *body {
	r := &body{}
	in.bodies[b] = r
	ast.Inspect(b, func(n ast.Node) bool {
		if n == nil || r.hairy {
			return false
		}
		r.nodes++
		switch x := n.(type) {
		case *ast.FuncLit, *ast.ForStmt, *ast.RangeStmt, *ast.GoStmt, *ast.DeferStmt, *ast.SelectStmt:
			r.hairy = true
		case *ast.CallExpr:
			r.call(x, imports, in.types)
		}
		return true
	})
	return r
}

func (r *body) call(x *ast.CallExpr, imports map[string]string, types map[string]bool) {
	switch fun := ast.Unparen(x.Fun).(type) {
	case *ast.Ident:
		switch {
		case fun.Obj == nil && builtins[fun.Name]:
		case fun.Obj == nil && (fun.Name == "recover" || fun.Name == "panic"):
			r.hairy = true
		case types[fun.Name]:
			// a conversion
		case fun.Obj != nil && fun.Obj.Kind != ast.Fun && fun.Obj.Kind != ast.Typ:
			r.hairy = true // a function value: an indirect call
		default:
			r.calls = append(r.calls, fun.Name)
		}
	case *ast.SelectorExpr:
		if id, ok := fun.X.(*ast.Ident); ok && id.Obj == nil {
			if p, ok := imports[id.Name]; ok {
				// Another package's function: inlinable or not, it is
				// not known here, except the intrinsics.
				if !intrinsics[p][fun.Sel.Name] {
					r.hairy = true
				}
				return
			}
		}
		r.calls = append(r.calls, "."+fun.Sel.Name)
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StarExpr:
		// a conversion
	default:
		r.hairy = true
	}
}

// judge decides whether b is inlinable, and its cost with its callees.
// A method call counts as a call of every method of that name in the
// package, the costliest deciding.
func (in *inlining) judge(b *body) bool {
	switch b.state {
	case 1:
		return false // recursion: the compiler does not inline it
	case 2:
		return b.inlines
	}
	b.state = 1
	cost, ok := b.nodes, !b.hairy
	for _, c := range b.calls {
		if !ok {
			break
		}
		var cands []*body
		if c[0] == '.' {
			cands = in.methods[c[1:]]
		} else if f := in.funcs[c]; f != nil {
			cands = []*body{f}
		}
		if len(cands) == 0 {
			ok = false // not the package's: not known here
			break
		}
		worst := 0
		for _, cb := range cands {
			if !in.judge(cb) {
				ok = false
			}
			worst = max(worst, cb.cost)
		}
		cost += worst
	}
	b.state, b.cost, b.inlines = 2, cost, ok && cost <= inlineBudget
	return b.inlines
}

// tiny reports whether the function or closure with body b is one the
// compiler would inline.
func (in *inlining) tiny(b *ast.BlockStmt) bool {
	bd := in.bodies[b]
	return bd != nil && in.judge(bd)
}
