package cshim

// CodeAt names the code at addr, an address of the process: the readable
// name of the function that contains it (as the -finstrument-functions
// regions are named) and the source position of addr itself, which for a
// call's return address minus one is the line of the call. ok is false when
// no symbol contains addr; File and Line are empty without debug info.
func (s *Symbolizer) CodeAt(addr uint64) (sym Symbol, ok bool) {
	m, ok := s.mapping(addr)
	if !ok {
		s.readMaps()
		if m, ok = s.mapping(addr); !ok {
			return Symbol{}, false
		}
	}
	if len(m.Path) == 0 || m.Path[0] != '/' {
		return Symbol{}, false
	}
	obj := s.object(m.Path)
	if obj == nil {
		return Symbol{}, false
	}
	off := addr - m.Start + m.Offset
	sym, ok = obj.lookupOffset(off)
	if !ok {
		return Symbol{}, false
	}
	for _, p := range obj.loads {
		if p.Off <= off && off-p.Off < p.Filesz {
			sym.File, sym.Line = obj.line(off - p.Off + p.Vaddr)
			break
		}
	}
	return sym, true
}

// CodeAt is the Symbolizer's CodeAt for the runtime's process, for the
// adapters of programming models (OpenMP) that name regions by the code
// that starts them. ok is false without a measurement.
func (rt *Runtime) CodeAt(addr uint64) (sym Symbol, ok bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.m == nil || rt.closed || rt.sym == nil {
		return Symbol{}, false
	}
	return rt.sym.CodeAt(addr)
}
