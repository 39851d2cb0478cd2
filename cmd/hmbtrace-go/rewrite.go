package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/filter"
)

// autoPath is the package that rewritten code calls.
const autoPath = "github.com/hmbtrace/hmbtrace/measure/auto"

// autoName is the name the rewrite imports autoPath under: a name no Go
// programmer writes, so that it cannot collide with one of the file's.
const autoName = "__hmb_auto"

// options says what the rewrite instruments.
type options struct {
	filter *filter.Filter // excluded functions get no probe; nil: none
	tiny   bool           // instrument inlinable functions too
}

// fileInput is one Go file of a package as the compiler is given it.
type fileInput struct {
	path         string // the file's absolute path, as the compiler would see it
	name         string // file name recorded for its regions (after -trimpath)
	src          []byte
	redirectOnly bool // no probes: only os.Exit and log.Fatal* are redirected
	parsed       *ast.File
}

// site is a probe added to a function.
type site struct {
	name string
	file string
	line int
}

// fileResult is a file after the rewrite.
type fileResult struct {
	src     []byte
	changed bool
	sites   []site
	skipped []string // functions left alone, with why, for -x style output
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
	order      int // among edits at the same offset, lower first
}

// rewritePackage rewrites the files of package pkgPath. Files are numbered
// in the order given, which is the compiler's order, because the compiler
// numbers init functions and package-level closures across files in it.
func rewritePackage(pkgPath string, files []*fileInput, opt options) ([]fileResult, error) {
	fset := token.NewFileSet()
	for _, f := range files {
		pf, err := parser.ParseFile(fset, f.name, f.src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %v", f.name, err)
		}
		f.parsed = pf
	}
	pkgName := ""
	if len(files) > 0 {
		pkgName = files[0].parsed.Name.Name
	}
	r := &rewriter{pkgPath: pkgPath, isMain: pkgName == "main", opt: opt, fset: fset, inl: newInlining()}
	for _, f := range files {
		r.inl.addFile(f.parsed)
	}
	out := make([]fileResult, len(files))
	for i, f := range files {
		res, err := r.file(i, f)
		if err != nil {
			return nil, err
		}
		out[i] = res
	}
	return out, nil
}

type rewriter struct {
	pkgPath string
	isMain  bool
	opt     options
	fset    *token.FileSet
	inl     *inlining

	inits     int // init functions seen so far in the package
	globFuncs int // closures at package level seen so far
}

// fileRewrite holds the edits to one file.
type fileRewrite struct {
	*rewriter
	index   int
	in      *fileInput
	tf      *token.File
	edits   []edit
	sites   []site
	skipped []string
	// lineDirectives is false when the file has its own //line
	// directives: then the positions after an insertion are left to them
	// rather than restored from the file's own lines.
	lineDirectives bool
	redirected     []string // the functions redirected, once each
}

func (r *rewriter) file(index int, in *fileInput) (fileResult, error) {
	f := in.parsed
	fr := &fileRewrite{
		rewriter:       r,
		index:          index,
		in:             in,
		tf:             r.fset.File(f.Pos()),
		lineDirectives: !hasLineDirective(f),
	}
	osName, logName := importName(f, "os"), importName(f, "log")
	for _, d := range f.Decls {
		if in.redirectOnly {
			break
		}
		switch d := d.(type) {
		case *ast.FuncDecl:
			fr.funcDecl(d)
		case *ast.GenDecl:
			// Closures in package-level initializers are named
			// pkg.init.funcN by the compiler, numbered across the package.
			if d.Tok == token.VAR {
				ast.Inspect(d, func(n ast.Node) bool {
					if lit, ok := n.(*ast.FuncLit); ok {
						r.globFuncs++
						fr.funcLit(lit, fmt.Sprintf("%s.init.func%d", r.pkgPath, r.globFuncs))
						return false
					}
					return true
				})
			}
		}
	}
	fr.redirects(f, osName, logName)
	if len(fr.edits) == 0 {
		return fileResult{src: in.src, skipped: fr.skipped}, nil
	}
	// The copy's positions are the user's file's: the compiler maps the
	// directive's file name with -trimpath as it would the file's own.
	fr.edits = append(fr.edits, edit{text: fmt.Sprintf("/*line %s:1:1*/", fr.in.path), order: -2})
	// The import goes right after the package clause, on its line, so
	// that no line moves.
	fr.insert(fr.offset(f.Name.End()), fmt.Sprintf(";import %s %q", autoName, autoPath), -1)
	var decls strings.Builder
	for i, s := range fr.sites {
		fmt.Fprintf(&decls, "\nvar %s = %s.NewSite(%q, %q, %d)", fr.siteVar(i), autoName, s.name, s.file, s.line)
	}
	// A package whose only use was a redirected function stays used.
	for _, p := range fr.redirected {
		fmt.Fprintf(&decls, "\nvar _ = %s", p)
	}
	decls.WriteString("\n")
	src := apply(in.src, fr.edits)
	// The declarations go after the file's last line, where they move
	// nothing; a //line directive there would be pointless.
	if len(src) > 0 && src[len(src)-1] != '\n' {
		src = append(src, '\n')
	}
	src = append(src, decls.String()...)
	return fileResult{src: src, changed: true, sites: fr.sites, skipped: fr.skipped}, nil
}

func (fr *fileRewrite) siteVar(i int) string { return fmt.Sprintf("__hmb_site_%d_%d", fr.index, i) }

func (fr *fileRewrite) offset(p token.Pos) int { return fr.tf.Offset(p) }

// insert adds text at offset off followed, when the file allows, by a
// /*line*/ directive that gives the next character its original position
// back: lines never move (nothing inserted holds a newline), columns do.
func (fr *fileRewrite) insert(off int, text string, order int) {
	fr.replace(off, off, text, order)
}

func (fr *fileRewrite) replace(start, end int, text string, order int) {
	if fr.lineDirectives {
		p := fr.tf.Position(fr.tf.Pos(end))
		// No file name: the compiler keeps the file's own, which
		// -trimpath then maps back to the user's file.
		text += fmt.Sprintf("/*line :%d:%d*/", p.Line, p.Column)
	}
	fr.edits = append(fr.edits, edit{start: start, end: end, text: text, order: order})
}

// apply performs edits, which do not overlap, on src.
func apply(src []byte, edits []edit) []byte {
	sort.SliceStable(edits, func(i, j int) bool {
		if edits[i].start != edits[j].start {
			return edits[i].start < edits[j].start
		}
		return edits[i].order < edits[j].order
	})
	var b bytes.Buffer
	b.Grow(len(src) + 64*len(edits))
	at := 0
	for _, e := range edits {
		b.Write(src[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.Write(src[at:])
	return b.Bytes()
}

func (fr *fileRewrite) funcDecl(d *ast.FuncDecl) {
	if d.Body == nil {
		return // assembly or linkname'd
	}
	name := fr.declName(d)
	isMainMain := fr.isMain && d.Recv == nil && d.Name.Name == "main"
	if d.Name.Name == "_" {
		fr.skipped = append(fr.skipped, name+": never called")
		return
	}
	probe := true
	if dir := blockingDirective(d.Doc); dir != "" {
		fr.skipped = append(fr.skipped, name+": "+dir)
		probe = false
	}
	fr.body(d.Body, name, d.Pos(), probe, isMainMain)
}

// declName is the function's name as the runtime and pprof print it:
// pkg.F, pkg.T.M, pkg.(*T).M, pkg.F[...] for generic ones, pkg.init.N.
func (fr *fileRewrite) declName(d *ast.FuncDecl) string {
	n := d.Name.Name
	if d.Recv == nil {
		if n == "init" {
			n = "init." + strconv.Itoa(fr.inits)
			fr.inits++
		} else if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
			n += "[...]"
		}
		return fr.pkgPath + "." + n
	}
	if len(d.Recv.List) == 0 {
		return fr.pkgPath + ".?." + n
	}
	t := d.Recv.List[0].Type
	ptr := false
	if p, ok := t.(*ast.ParenExpr); ok {
		t = p.X
	}
	if s, ok := t.(*ast.StarExpr); ok {
		ptr, t = true, s.X
	}
	generic := false
	switch x := t.(type) {
	case *ast.IndexExpr:
		t, generic = x.X, true
	case *ast.IndexListExpr:
		t, generic = x.X, true
	}
	typ := "?"
	if id, ok := t.(*ast.Ident); ok {
		typ = id.Name
	}
	if generic {
		typ += "[...]"
	}
	if ptr {
		typ = "(*" + typ + ")"
	}
	return fr.pkgPath + "." + typ + "." + n
}

// body instruments the body of the declared function name, and the
// closures in it.
func (fr *fileRewrite) body(b *ast.BlockStmt, name string, pos token.Pos, probe, isMainMain bool) {
	// Closures are numbered in source order: name.funcN for those of a
	// declared function, name.N for those nested in a closure.
	fr.closures(b, name, true)
	lbrace := fr.offset(b.Lbrace) + 1
	if isMainMain {
		// Deferred first, so it runs last: after main's own region ended.
		fr.insert(lbrace, fmt.Sprintf("defer %s.Close();", autoName), 0)
	}
	if !probe {
		return
	}
	p := fr.fset.Position(pos)
	file := fr.in.name
	if fr.opt.filter != nil && fr.opt.filter.Excluded(name, file) {
		fr.skipped = append(fr.skipped, name+": excluded by the filter")
		return
	}
	if !fr.opt.tiny && !isMainMain && fr.inl.tiny(b) {
		fr.skipped = append(fr.skipped, name+": small, left to the inliner")
		return
	}
	fr.sites = append(fr.sites, site{name: name, file: file, line: p.Line})
	fr.insert(lbrace, fmt.Sprintf("defer %s.Enter(%s).End();", autoName, fr.siteVar(len(fr.sites)-1)), 1)
}

// closures instruments the function literals directly inside n (not those
// nested in them, which body reaches through its recursion).
func (fr *fileRewrite) closures(n ast.Node, parent string, declared bool) {
	count := 0
	ast.Inspect(n, func(c ast.Node) bool {
		lit, ok := c.(*ast.FuncLit)
		if !ok {
			return true
		}
		count++
		var name string
		if declared {
			name = fmt.Sprintf("%s.func%d", parent, count)
		} else {
			name = fmt.Sprintf("%s.%d", parent, count)
		}
		fr.funcLit(lit, name)
		return false
	})
}

func (fr *fileRewrite) funcLit(lit *ast.FuncLit, name string) {
	// Nested closures of a closure are name.N.
	fr.closures(lit.Body, name, false)
	lbrace := fr.offset(lit.Body.Lbrace) + 1
	p := fr.fset.Position(lit.Pos())
	file := fr.in.name
	if fr.opt.filter != nil && fr.opt.filter.Excluded(name, file) {
		fr.skipped = append(fr.skipped, name+": excluded by the filter")
		return
	}
	if !fr.opt.tiny && fr.inl.tiny(lit.Body) {
		fr.skipped = append(fr.skipped, name+": small, left to the inliner")
		return
	}
	fr.sites = append(fr.sites, site{name: name, file: file, line: p.Line})
	fr.insert(lbrace, fmt.Sprintf("defer %s.Enter(%s).End();", autoName, fr.siteVar(len(fr.sites)-1)), 1)
}

// redirects points os.Exit and log.Fatal, log.Fatalf and log.Fatalln at
// auto's versions, which write the trace before the process ends. Only
// qualified references through the file's import are seen: a dot import, a
// *log.Logger's Fatal methods and syscall.Exit are left alone.
func (fr *fileRewrite) redirects(f *ast.File, osName, logName string) {
	if osName == "" && logName == "" {
		return
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		// A package name resolves to no object in the file's scope;
		// a local variable called os does.
		if !ok || id.Obj != nil {
			return true
		}
		var to string
		switch {
		case id.Name == osName && sel.Sel.Name == "Exit":
			to = "Exit"
		case id.Name == logName && (sel.Sel.Name == "Fatal" || sel.Sel.Name == "Fatalf" || sel.Sel.Name == "Fatalln"):
			to = sel.Sel.Name
		default:
			return true
		}
		fr.replace(fr.offset(sel.Pos()), fr.offset(sel.End()), autoName+"."+to, 0)
		if orig := id.Name + "." + sel.Sel.Name; !slices.Contains(fr.redirected, orig) {
			fr.redirected = append(fr.redirected, orig)
		}
		return false
	})
}

// importName is the name under which f imports path, "" if it does not (or
// only as _ or .).
func importName(f *ast.File, path string) string {
	for _, is := range f.Imports {
		p, err := strconv.Unquote(is.Path.Value)
		if err != nil || p != path {
			continue
		}
		if is.Name == nil {
			return path[strings.LastIndex(path, "/")+1:]
		}
		if is.Name.Name == "_" || is.Name.Name == "." {
			return ""
		}
		return is.Name.Name
	}
	return ""
}

// blockingDirective returns the //go: directive in doc that forbids a
// probe, "" if none. A deferred call needs stack and write barriers and
// may run the scheduler; the functions marked nosplit, systemstack,
// nowritebarrier*, norace, linkname and cgo_* cannot have them or are
// bound to the runtime's rules. noinline is no reason: the function is
// called anyway, and uintptrescapes does not care.
func blockingDirective(doc *ast.CommentGroup) string {
	if doc == nil {
		return ""
	}
	for _, c := range doc.List {
		if !strings.HasPrefix(c.Text, "//go:") {
			continue
		}
		d := strings.Fields(c.Text[2:])[0]
		switch d {
		case "go:noinline", "go:uintptrescapes", "go:build", "go:generate", "go:fix":
			continue
		}
		return "//" + d
	}
	return ""
}

// hasLineDirective reports whether f has //line or /*line directives of its
// own (generated code).
func hasLineDirective(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "//line ") || strings.HasPrefix(c.Text, "/*line ") {
				return true
			}
		}
	}
	return false
}
