package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hmbtrace/hmbtrace/filter"
)

// hmbtrace's GCC plugin (cshim/gccplugin), installed in <libdir>/hmbtrace.
// GCC names a plugin's arguments -fplugin-arg-NAME-KEY, NAME being the file's
// base name, and splits the option at the first '-' after it: hence the
// underscore.
const (
	pluginSubdir  = "hmbtrace"
	pluginFile    = "hmbtrace_gcc.so"
	pluginVersion = "hmbtrace_gcc.version"
	pluginArg     = "-fplugin-arg-hmbtrace_gcc-"
)

// gccPluginFlags returns the flags that load hmbtrace's GCC plugin, which
// instruments after inlining, and false with the reason when the compile
// must fall back to -finstrument-functions. With -flto the pass runs where
// the optimisers do, in lto1 at the link, which takes the plugin from the
// link's command line (linkPluginFlags); at the compile it instruments the
// fat objects' code of -ffat-lto-objects.
func gccPluginFlags(o options, c *cmdline, info compilerInfo, f *filter.Filter, e env) ([]string, []note, bool) {
	fallback := func(why string, verbose bool) ([]string, []note, bool) {
		return nil, []note{{text: "-finstrument-functions (inlined functions are instrumented too): " + why, verbose: verbose}}, false
	}
	if o.noPlugin {
		return fallback("--no-plugin", true)
	}
	lib, err := e.lib()
	if err != nil {
		return fallback("no GCC plugin: "+err.Error(), true)
	}
	dir := filepath.Join(lib.libDir, pluginSubdir)
	so := filepath.Join(dir, pluginFile)
	if !e.exists(so) {
		return fallback(fmt.Sprintf("no GCC plugin %s (make cshim builds it when GCC's plugin headers are installed, Debian package gcc-N-plugin-dev)", so), true)
	}
	// A plugin loads only into the GCC it was built for: another one
	// rejects it and the compile fails.
	built, err := e.readFile(filepath.Join(dir, pluginVersion))
	if err != nil {
		return fallback(fmt.Sprintf("GCC plugin %s: %v", so, err), false)
	}
	bv, bconf, _ := strings.Cut(strings.TrimSpace(string(built)), "\n")
	if bv != info.version || strings.TrimSpace(bconf) != info.configured {
		return fallback(fmt.Sprintf("the GCC plugin %s was built for GCC %s, %s is GCC %s or configured otherwise (rebuild hmbtrace with this GCC's plugin headers: make cshim PLUGIN_GCC=...)",
			so, bv, c.compiler, info.version), false)
	}
	for _, a := range c.args {
		// Both would call the hooks twice per function.
		if a == "-finstrument-functions" {
			return fallback("the command line asks for it", true)
		}
	}
	flags := []string{"-fplugin=" + so}
	notes := []note{{text: "GCC plugin " + so + ": functions are instrumented after inlining", verbose: true}}
	if o.noExcludeSystem {
		flags = append(flags, pluginArg+"keep-system")
	} else if c.has(langC) || c.has(langCXX) || len(c.sources) == 0 {
		// The plugin knows the compiler's system headers; an MPI wrapper's
		// -I directories (its C++ bindings' inline functions) it is told,
		// as -finstrument-functions-exclude-file-list is. A link of objects
		// may have lto1 compile C and C++ functions.
		for _, d := range excludeDirs(append(append([]string(nil), info.systemDirs...), c.isystem...)) {
			flags = append(flags, pluginArg+"system-dir="+d)
		}
	}
	if f != nil {
		path, err := writeRules(f)
		if err != nil {
			notes = append(notes, note{text: "the filter applies at run time only: " + err.Error()})
		} else {
			flags = append(flags, pluginArg+"rules="+path)
			notes = append(notes, note{text: "the filter applies at compile time: " + path, verbose: true})
		}
	}
	return flags, notes, true
}

// linkPluginFlags returns the plugin's flags for a link of objects: a GCC
// link runs lto1 on the objects compiled with -flto (with or without -flto
// on the link), and lto1 loads the plugins the link names. Without LTO
// objects nothing is compiled and the flags do nothing. The -isystem
// directories of the compiles are not known here: GCC streams whether a
// location is in a system header into the LTO objects, and the plugin asks
// it.
func linkPluginFlags(o options, c *cmdline, e env) ([]string, []note, error) {
	// C++'s system include directories hold C's; a GCC without cc1plus
	// names none for C++.
	info := identify(e, c.compiler, langCXX)
	if info.family != familyGCC {
		return nil, nil, nil
	}
	if len(info.systemDirs) == 0 {
		info = identify(e, c.compiler, langC)
	}
	var f *filter.Filter
	if o.filterFile != "" {
		var err error
		if f, err = filter.ParseFile(o.filterFile); err != nil {
			return nil, nil, err // ParseFile names the file
		}
	}
	// The compiles said why the plugin is not used, or that it is, and
	// what became of the filter.
	flags, _, ok := gccPluginFlags(o, c, info, f, e)
	if !ok {
		return nil, nil, nil
	}
	return flags, []note{{text: "GCC plugin at the link too: lto1 instruments the functions of objects compiled with -flto", verbose: true}}, nil
}

// writeRules writes the filter's rules in the plugin's form, one a line:
//
//	file exclude|include PATTERN
//	region exclude|include PATTERN
//
// into the user's cache, named by their hash: the compiler replaces this
// process, so nothing is left to delete the file after the compile, and
// every compile with the same filter shares one file.
func writeRules(f *filter.Filter) (string, error) {
	var b bytes.Buffer
	b.WriteString("# hmbtrace-instrument: the filter's rules for hmbtrace_gcc.so\n")
	for _, kind := range []struct {
		name  string
		rules []filter.Rule
	}{{"file", f.FileRules()}, {"region", f.RegionRules()}} {
		for _, r := range kind.rules {
			if strings.ContainsAny(r.Pattern, "\n\r") {
				return "", fmt.Errorf("filter pattern %q has a line break", r.Pattern)
			}
			verb := "include"
			if r.Exclude {
				verb = "exclude"
			}
			fmt.Fprintf(&b, "%s %s %s\n", kind.name, verb, r.Pattern)
		}
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "hmbtrace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	path := filepath.Join(dir, fmt.Sprintf("filter-%x.rules", sum[:12]))
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b.Bytes()) {
		return path, nil
	}
	// Parallel compiles may write it at once: each renames a whole file.
	tmp, err := os.CreateTemp(dir, ".filter-*.rules")
	if err != nil {
		return "", err
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return path, nil
}
