package cshim

// Function is a function of an ELF file as the measurement names its
// region: Name as the run time gives it (demangled, Fortran's source
// names), File its source file when the file's DWARF tells ("" if not).
type Function struct {
	Name, File string
}

// Functions returns the functions the ELF executable or shared object at
// path defines, named as the measurement names their regions when they
// are instrumented: what a filter rule is matched against. hmbtrace-
// instrument checks a filter file's rules against them after a link.
func Functions(path string) ([]Function, error) {
	obj, err := openObject(path)
	if err != nil {
		return nil, err
	}
	defer obj.close()
	out := make([]Function, 0, len(obj.syms))
	for i, fn := range obj.syms {
		if i > 0 && obj.syms[i-1].value == fn.value {
			continue // an alias: lookups find the first
		}
		file, _ := obj.line(fn.value)
		out = append(out, Function{Name: obj.name(fn.name, fn.value, 0), File: file})
	}
	return out, nil
}
