package main

import (
	"fmt"
	"regexp"
	"strings"
)

// fn is one line of the table: an MPI function and its kind.
type fn struct {
	line   int
	kind   string // "-", "region", "send", ..., "coll", "icoll"
	shape  string // the collective's shape for coll and icoll
	ret    string
	name   string // MPI_Send
	proto  string // the parameter list as written
	params []param
}

// param is one parameter: its C type with the array brackets folded into
// a pointer (const int recvcounts[] is "const int *"), and its name.
type param struct {
	typ, name string
}

var (
	protoRE = regexp.MustCompile(`^(\w[\w ]*?)\s*\b(MPI_\w+)\s*\((.*)\)\s*$`)
	paramRE = regexp.MustCompile(`^(.*?)\s*\b(\w+)\s*((?:\[\s*\w*\s*\])*)$`)
)

// kinds lists the kinds the generator knows, and for the collectives the
// shapes.
var kinds = map[string]bool{
	"-": true, "region": true, "init": true, "init_thread": true, "finalize": true, "abort": true,
	"send": true, "recv": true, "sendrecv": true, "sendrecv_replace": true, "isend": true, "irecv": true,
	"send_init": true, "recv_init": true, "start": true, "startall": true,
	"wait": true, "waitall": true, "waitany": true, "waitsome": true,
	"test": true, "testall": true, "testany": true, "testsome": true, "request_free": true,
	"mprobe": true, "mrecv": true, "imrecv": true, "coll": true, "icoll": true, "comm": true, "comm_idup": true,
}

func parseTable(src []byte) ([]fn, error) {
	var fns []fn
	seen := map[string]int{}
	for i, text := range strings.Split(string(src), "\n") {
		line := i + 1
		text = strings.TrimSpace(text)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		kind, proto, ok := strings.Cut(text, " ")
		if !ok {
			return nil, fmt.Errorf("mpi.tbl:%d: want a kind and a prototype", line)
		}
		f := fn{line: line, kind: kind}
		if k, s, ok := strings.Cut(kind, ":"); ok {
			f.kind, f.shape = k, s
		}
		if !kinds[f.kind] {
			return nil, fmt.Errorf("mpi.tbl:%d: unknown kind %q", line, kind)
		}
		if (f.kind == "coll" || f.kind == "icoll") != (f.shape != "") {
			return nil, fmt.Errorf("mpi.tbl:%d: kind %q: coll and icoll take a shape (coll:bcast), no other kind does", line, kind)
		}
		if f.shape != "" && shapes[f.shape] == nil {
			return nil, fmt.Errorf("mpi.tbl:%d: unknown collective shape %q", line, f.shape)
		}
		m := protoRE.FindStringSubmatch(strings.TrimSpace(proto))
		if m == nil {
			return nil, fmt.Errorf("mpi.tbl:%d: cannot read the prototype %q", line, proto)
		}
		f.ret, f.name, f.proto = m[1], m[2], strings.TrimSpace(m[3])
		if prev, ok := seen[f.name]; ok {
			return nil, fmt.Errorf("mpi.tbl:%d: %s is on line %d already", line, f.name, prev)
		}
		seen[f.name] = line
		if f.proto != "void" && f.proto != "" {
			for _, p := range strings.Split(f.proto, ",") {
				p = strings.TrimSpace(p)
				if p == "..." {
					f.params = append(f.params, param{typ: "...", name: "..."})
					continue
				}
				pm := paramRE.FindStringSubmatch(p)
				if pm == nil {
					return nil, fmt.Errorf("mpi.tbl:%d: cannot read the parameter %q", line, p)
				}
				typ := strings.Join(strings.Fields(strings.ReplaceAll(pm[1], "*", " * ")), " ")
				typ = strings.ReplaceAll(typ, "* *", "**")
				typ += strings.Repeat(" *", strings.Count(pm[3], "["))
				typ = strings.ReplaceAll(strings.ReplaceAll(typ, "* *", "**"), "* *", "**")
				f.params = append(f.params, param{typ: typ, name: pm[2]})
			}
		}
		if f.kind != "-" {
			if f.ret != "int" {
				return nil, fmt.Errorf("mpi.tbl:%d: %s returns %s: only functions returning an error code are wrapped", line, f.name, f.ret)
			}
			for _, p := range f.params {
				if p.typ == "..." {
					return nil, fmt.Errorf("mpi.tbl:%d: %s is variadic and cannot be wrapped", line, f.name)
				}
			}
			if err := checkUses(&f); err != nil {
				return nil, fmt.Errorf("mpi.tbl:%d: %s: %v", line, f.name, err)
			}
		}
		fns = append(fns, f)
	}
	return fns, nil
}

// param returns the parameter named name, or nil.
func (f *fn) param(name string) *param {
	for i := range f.params {
		if f.params[i].name == name {
			return &f.params[i]
		}
	}
	return nil
}

// checkUses checks that f has every parameter its kind's hooks read, so
// that a table line with a wrong name fails here, not in the C compiler.
func checkUses(f *fn) error {
	s := specOf(f)
	for _, u := range s.uses {
		name := strings.TrimSuffix(u, ">")
		if f.param(name) == nil {
			return fmt.Errorf("kind %s reads a parameter %q, which it does not have", f.kind, name)
		}
	}
	return nil
}
