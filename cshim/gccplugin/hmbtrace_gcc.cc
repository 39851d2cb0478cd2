// hmbtrace-gcc: a GCC plugin that instruments functions after inlining.
//
// -finstrument-functions adds the entry and exit hooks while the front end
// gimplifies a function, before anything is inlined, so every inlined copy
// of a small accessor keeps its two hook calls in the caller's hot loop, and
// the calls stop the loop from being vectorised. This plugin adds the same
// hooks, __cyg_profile_func_enter(this_fn, call_site) at entry and
// __cyg_profile_func_exit(this_fn, call_site) before every return and on
// the way out of an exception, in a pass that runs after IPA inlining: a
// function is traced where it still has an out-of-line body, and inlined
// copies cost nothing. Score-P's GCC plugin works the same way (Knüpfer et
// al.); this one is written from GCC's plugin API alone. In optimised
// code the hooks' throttled fast path is emitted inline, the library's
// hooks called only on a miss ("The throttled functions' fast path"). For
// Fortran it also writes each function's name as the source gives it into
// the object (.hmbtrace.names), so that a region has one name with or
// without -g.
//
// Arguments (-fplugin-arg-hmbtrace-gcc-NAME[=VALUE]):
//   keep-system   also instrument functions from system headers
//   system-dir=DIR  (repeatable) headers whose path contains DIR count as
//                 system headers too, as -finstrument-functions-exclude-
//                 file-list matches: hmbtrace-instrument passes the
//                 directories an MPI wrapper adds with -I
//   rules=FILE    the filter's rules, written by hmbtrace-instrument from a
//                 Score-P filter file: one rule a line,
//                   region exclude|include PATTERN
//                   file exclude|include PATTERN
//                 evaluated in order, the last matching rule of a kind
//                 deciding, with fnmatch(3) patterns; a function is left
//                 out when its file or its name is excluded (Score-P's rule).
//   verbose       print each function's decision on stderr

#include "gcc-plugin.h"
#include "plugin-version.h"
#include "tree.h"
#include "stringpool.h"
#include "tree-pass.h"
#include "context.h"
#include "function.h"
#include "basic-block.h"
#include "cfghooks.h"
#include "cfgloop.h"
#include "gimple.h"
#include "gimple-iterator.h"
#include "tree-cfg.h"
#include "ssa.h"
#include "tree-into-ssa.h"
#include "except.h"
#include "tree-eh.h"
#include "langhooks.h"
#include "diagnostic-core.h"
#include "input.h"
#include "cgraph.h"
#include "attribs.h"
#include "output.h"
#include "varasm.h"
#include "stor-layout.h"
#include "hard-reg-set.h"

// The throttled functions' cache the emitted fast path reads: its layout
// comes from the header that defines it for the library and the hooks.
#include "hmbtrace.h"

#include <fnmatch.h>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

// libiberty's demangler, which cc1, cc1plus and f951 export; demangle.h is
// not among the plugin headers. The flags are libiberty's DMGL_PARAMS and
// DMGL_ANSI, the ones c++filt uses and hmbtrace's own demangler matches.
extern "C" char *cplus_demangle (const char *mangled, int options);
static const int demangle_params = 1 << 0;
static const int demangle_ansi = 1 << 1;

int plugin_is_GPL_compatible;

namespace {

struct rule
{
  bool exclude;
  std::string pattern;
};

// What the arguments asked for.
bool keep_system;
bool verbose;
std::vector<rule> region_rules, file_rules;
std::vector<std::string> system_dirs;

bool
in_system_dir (tree fndecl)
{
  const char *f = DECL_SOURCE_FILE (fndecl);
  if (!f)
    return false;
  for (const std::string &d : system_dirs)
    if (strstr (f, d.c_str ()))
      return true;
  return false;
}

// excluded_by returns whether the last rule that matches name excludes it.
bool
excluded_by (const std::vector<rule> &rules, const std::string &name)
{
  for (auto r = rules.rbegin (); r != rules.rend (); ++r)
    if (fnmatch (r->pattern.c_str (), name.c_str (), 0) == 0)
      return r->exclude;
  return false;
}

bool
read_rules (const char *path)
{
  FILE *f = fopen (path, "r");
  if (!f)
    {
      error ("hmbtrace-gcc: cannot open the filter rules %qs: %m", path);
      return false;
    }
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int lineno = 0;
  bool ok = true;
  while ((n = getline (&line, &cap, f)) >= 0)
    {
      lineno++;
      std::string s (line, n);
      if (!s.empty () && s.back () == '\n')
	s.pop_back ();
      if (s.empty () || s[0] == '#')
	continue;
      std::vector<rule> *list = NULL;
      size_t p;
      if (s.compare (0, 7, "region ") == 0)
	list = &region_rules, p = 7;
      else if (s.compare (0, 5, "file ") == 0)
	list = &file_rules, p = 5;
      rule r;
      if (list && s.compare (p, 8, "exclude ") == 0)
	r.exclude = true, p += 8;
      else if (list && s.compare (p, 8, "include ") == 0)
	r.exclude = false, p += 8;
      else
	{
	  error ("hmbtrace-gcc: %s:%d: not a rule: %qs", path, lineno,
		 s.c_str ());
	  ok = false;
	  continue;
	}
      r.pattern = s.substr (p);
      list->push_back (r);
    }
  free (line);
  fclose (f);
  return ok;
}

// asm_name is a function's symbol, without the '*' GCC puts before names
// given by asm labels.
const char *
asm_name (tree fndecl)
{
  const char *s = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (fndecl));
  return s[0] == '*' ? s + 1 : s;
}

bool
fortran_p ()
{
  // "GNU Fortran2008" and the like, by the standard in force.
  return strncmp (lang_hooks.name, "GNU Fortran", 11) == 0;
}

// fortran_external is cshim's fortranExternal for a symbol without a
// clone suffix: gfortran's external procedure foo_ is foo.
std::string
fortran_external (const std::string &base)
{
  size_t n = base.size ();
  if (n < 2 || base[n - 1] != '_' || base[n - 2] == '_' || base[0] < 'a'
      || base[0] > 'z')
    return base;
  for (size_t i = 0; i + 1 < n; i++)
    {
      char c = base[i];
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
	return base;
    }
  return base.substr (0, n - 1);
}

// Fortran's region names come from the source, with or without -g: the
// run time finds a symbol's name only in DWARF where the symbol does not
// tell it (a contained procedure's inner.0, the main program's MAIN__), so
// the plugin writes the names it knows from DECL_NAME and DECL_CONTEXT
// into the object, in the section .hmbtrace.names, which the run time
// (cshim's sourceNames) prefers to DWARF and the symbol. A record is
//   .balign 8; .dc.a FUNCTION; .string "NAME"; .balign 8
// keyed by the function's address, which the linker fills in: local
// symbols of two units (both units' inner.0) cannot be mixed up, and the
// section, not allocated, costs the program no memory.

// unit_names holds the source names of the unit's functions by symbol,
// taken before IPA, while every function still exists: a contained
// procedure inlined into its host, or a main program inlined into main,
// is gone after it, but its OpenMP regions' bodies (inner.0._omp_fn.0),
// or main, are still named after it.
std::map<std::string, std::string> unit_names;
// program_name is the unit's main program's name, if it has one.
std::string program_name;
// named are the Fortran functions this unit emits, whose names go into
// .hmbtrace.names at the unit's end.
std::vector<tree> named;

// fortran_decl_p is whether fndecl comes from a Fortran unit: in f951 all
// do; in lto1 (-flto) the unit's language says.
bool
fortran_decl_p (tree fndecl)
{
  if (fortran_p ())
    return true;
  for (tree c = DECL_CONTEXT (fndecl); c;
       c = TYPE_P (c) ? TYPE_CONTEXT (c) : DECL_CONTEXT (c))
    if (TREE_CODE (c) == TRANSLATION_UNIT_DECL)
      {
	const char *l = TRANSLATION_UNIT_LANGUAGE (c);
	return l && strncmp (l, "GNU Fortran", 11) == 0;
      }
  return false;
}

std::string fortran_name (tree fndecl);

// unit_symbol is fndecl's symbol as its unit named it: lto1 renames the
// local symbols it shares between partitions (MAIN__.lto_priv.0).
std::string
unit_symbol (tree fndecl)
{
  std::string sym (asm_name (fndecl));
  for (size_t p; (p = sym.find (".lto_priv.")) != std::string::npos;)
    {
      size_t end = p + 10;
      while (end < sym.size () && ISDIGIT (sym[end]))
	end++;
      sym.erase (p, end - p);
    }
  return sym;
}

// clone_of names sym, a function the compiler made from the function
// whose symbol is sym's longest prefix ending before a '.' that names one
// (inner.0._omp_fn.0 from inner.0, MAIN__._omp_fn.1 from MAIN__), as that
// function with " [clone .suffix]", the C++ demangler's form. It returns
// "" if no prefix names a function of the unit.
std::string
clone_of (const std::string &sym)
{
  for (size_t dot = sym.rfind ('.'); dot != std::string::npos && dot > 0;
       dot = sym.rfind ('.', dot - 1))
    {
      auto it = unit_names.find (sym.substr (0, dot));
      if (it != unit_names.end ())
	return it->second + " [clone " + sym.substr (dot) + "]";
    }
  return "";
}

// source_name is the name of a Fortran function as its source gives it:
// module procedures as module::procedure (from the symbol, which tells
// the module), contained ones under their host (host::inner), the main
// program by its name, external procedures by theirs (without the
// trailing underscore of their symbol), and what the compiler made from
// one of them after it, as clone_of says.
std::string
source_name (tree fndecl)
{
  std::string sym = unit_symbol (fndecl);
  if (sym == "MAIN__")
    {
      // gfortran calls an unnamed main program MAIN__ in the source too.
      const char *n = DECL_NAME (fndecl) ? IDENTIFIER_POINTER (DECL_NAME (fndecl)) : "";
      return *n && strcmp (n, "MAIN__") != 0 ? n : "main program";
    }
  size_t mod = sym.find ("_MOD_");
  if (sym.compare (0, 2, "__") == 0 && mod != std::string::npos && mod > 2
      && mod + 5 < sym.size () && sym.find ('.') == std::string::npos)
    return sym.substr (2, mod - 2) + "::" + sym.substr (mod + 5);
  if (DECL_ARTIFICIAL (fndecl) || DECL_ORIGIN (fndecl) != fndecl)
    {
      std::string c = clone_of (sym);
      if (!c.empty ())
	return c;
      // The function it came from, where GCC says: an IPA clone made
      // after the names were taken has its origin, an OpenMP body its
      // host as context (in lto1 the partition may hold neither's code).
      tree from = DECL_ORIGIN (fndecl) != fndecl ? DECL_ORIGIN (fndecl)
		  : DECL_CONTEXT (fndecl);
      if (from && TREE_CODE (from) == FUNCTION_DECL)
	{
	  std::string f = unit_symbol (from);
	  if (sym.size () > f.size () && sym.compare (0, f.size (), f) == 0
	      && sym[f.size ()] == '.')
	    return fortran_name (from) + " [clone " + sym.substr (f.size ()) + "]";
	}
    }
  tree ctx = DECL_CONTEXT (fndecl);
  if (DECL_NAME (fndecl) && ctx && TREE_CODE (ctx) == FUNCTION_DECL)
    return fortran_name (ctx) + "::" + IDENTIFIER_POINTER (DECL_NAME (fndecl));
  // The run time drops gfortran's trailing underscore of an external
  // procedure's symbol (cshim's fortranExternal), as DWARF names it.
  size_t dot = sym.find ('.');
  if (dot != std::string::npos && dot > 0)
    {
      std::string ext = fortran_external (sym.substr (0, dot));
      if (ext.size () < dot)
	return ext + " [clone " + sym.substr (dot) + "]";
      return sym;
    }
  return fortran_external (sym);
}

// main_holds_program is whether gfortran inlined the unit's main program
// into the main it writes: optimized, MAIN__ is gone after IPA.
bool
main_holds_program ()
{
  if (program_name.empty ())
    return false;
  cgraph_node *c;
  FOR_EACH_FUNCTION (c)
    if (unit_symbol (c->decl) == "MAIN__")
      // In lto1, MAIN__ may be compiled in another partition than main.
      return c->inlined_to || (!c->definition && !c->in_other_partition);
  return true;
}

// fortran_name is fndecl's source name, the one taken before IPA if there
// is one. Where the main program was inlined into main, main is named
// after it, as cshim names it.
std::string
fortran_name (tree fndecl)
{
  std::string sym = unit_symbol (fndecl);
  if (sym == "main" && main_holds_program ())
    return program_name;
  auto it = unit_names.find (sym);
  if (it != unit_names.end ())
    return it->second;
  return source_name (fndecl);
}

// take_names fills unit_names before IPA: every function of a Fortran
// unit by its source name.
void
take_names (void *, void *)
{
  // What the compiler made from another function after it, shortest
  // symbol first: clone_of builds their names on the names of the
  // functions they were made from (inner.0 before inner.0._omp_fn.0).
  std::vector<std::pair<std::string, tree>> made;
  cgraph_node *node;
  FOR_EACH_FUNCTION (node)
    {
      tree d = node->decl;
      if (!fortran_decl_p (d))
	continue;
      std::string sym = unit_symbol (d);
      if (DECL_ARTIFICIAL (d) || DECL_ORIGIN (d) != d)
	made.emplace_back (sym, d);
      else
	unit_names[sym] = source_name (d);
    }
  std::sort (made.begin (), made.end (),
	     [] (const std::pair<std::string, tree> &a,
		 const std::pair<std::string, tree> &b) {
	       return a.first.size () < b.first.size ();
	     });
  for (auto &m : made)
    unit_names[m.first] = source_name (m.second);
  auto it = unit_names.find ("MAIN__");
  if (it != unit_names.end ())
    program_name = it->second;
}

// write_names writes the names of the functions the unit emitted into
// .hmbtrace.names, at the unit's end, when the assembler file is still
// open.
void
write_names (void *, void *)
{
  if (named.empty () || !asm_out_file)
    return;
  for (tree d : named)
    {
      std::string n = fortran_name (d);
      const char *sym = IDENTIFIER_POINTER (DECL_ASSEMBLER_NAME (d));
#if HAVE_GAS_SECTION_LINK_ORDER
      // Linked to the function's section (SHF_LINK_ORDER): the linker
      // keeps the record exactly when it keeps the function. A section
      // that is not allocated and has relocations is otherwise dropped
      // whole by --gc-sections.
      fputs ("\t.pushsection .hmbtrace.names,\"o\",%progbits,", asm_out_file);
      assemble_name (asm_out_file, sym);
      fputs ("\n", asm_out_file);
#else
      fputs ("\t.pushsection .hmbtrace.names,\"\",%progbits\n", asm_out_file);
#endif
      fputs ("\t.balign 8\n\t.dc.a ", asm_out_file);
      assemble_name (asm_out_file, sym);
      fputs ("\n\t.string \"", asm_out_file);
      for (char c : n)
	{
	  if (c == '"' || c == '\\')
	    fputc ('\\', asm_out_file);
	  fputc (c, asm_out_file);
	}
      fputs ("\"\n\t.balign 8\n\t.popsection\n", asm_out_file);
    }
  named.clear ();
}

// region_name is the name hmbtrace's run time gives the function's region
// (cshim's demangleSymbol, and for Fortran the names of .hmbtrace.names),
// so that the filter decides here as it would there.
std::string
region_name (tree fndecl)
{
  if (fortran_decl_p (fndecl))
    return fortran_name (fndecl);
  const char *sym = asm_name (fndecl);
  if (char *d = cplus_demangle (sym, demangle_params | demangle_ansi))
    {
      std::string s (d);
      free (d);
      return s;
    }
  return sym;
}

// region_decl is the function whose address names fndecl's region. An IPA
// clone (foo.constprop.0, foo.isra.0) is named by the function it was
// cloned from, as -finstrument-functions, which runs before cloning, names
// it, when that function is emitted here for sure (defined, public, not in
// a comdat group that may drop it): else its symbol may not exist, and the
// clone names itself. ipa-split's parts (foo.part.0) always do: the
// function they come from calls them, and both are traced.
tree
region_decl (tree fndecl)
{
  tree origin = DECL_ORIGIN (fndecl);
  if (origin == fndecl || TREE_CODE (origin) != FUNCTION_DECL)
    return fndecl;
  cgraph_node *self = cgraph_node::get (fndecl);
  if (self && self->split_part)
    return fndecl;
  cgraph_node *o = cgraph_node::get (origin);
  if (!o || !o->definition || o->inlined_to || o->body_removed
      || !TREE_PUBLIC (origin) || DECL_EXTERNAL (origin)
      || DECL_COMDAT (origin) || DECL_ABSTRACT_P (origin))
    return fndecl;
  return origin;
}

// source_file is the function's file as an absolute path, the form DWARF
// gives the run time.
std::string
source_file (tree fndecl)
{
  const char *f = DECL_SOURCE_FILE (fndecl);
  if (!f || !*f)
    return "";
  if (f[0] == '/')
    return f;
  return std::string (getpwd ()) + "/" + f;
}

// instrumented decides whether the pass instruments fndecl, and why not.
bool
instrumented (tree fndecl, const char **why)
{
  // The attribute itself: GCC sets DECL_NO_INSTRUMENT_FUNCTION_ENTRY_EXIT
  // on every function it gimplifies without -finstrument-functions.
  if (lookup_attribute ("no_instrument_function", DECL_ATTRIBUTES (fndecl)))
    return *why = "no_instrument_function", false;
  // Compiler-generated functions (static initialisers, OpenMP outlined
  // bodies, implicit C++ members): -finstrument-functions leaves most of
  // them out too, and none is a function the user wrote. IPA clones are
  // artificial too: the function they were cloned from decides.
  if (DECL_ARTIFICIAL (DECL_ORIGIN (fndecl)))
    return *why = "compiler-generated", false;
  if (!keep_system && (DECL_IN_SYSTEM_HEADER (fndecl) || in_system_dir (fndecl)))
    return *why = "in a system header", false;
  if (!file_rules.empty () || !region_rules.empty ())
    {
      std::string file = source_file (fndecl);
      if (!file.empty () && excluded_by (file_rules, file))
	return *why = "its file is filtered", false;
      if (excluded_by (region_rules, region_name (region_decl (fndecl))))
	return *why = "filtered", false;
    }
  return true;
}

tree
hook (built_in_function code, const char *name)
{
  if (tree d = builtin_decl_implicit (code))
    return d;
  // A front end that does not declare the profiling builtins.
  tree type = build_function_type_list (void_type_node, ptr_type_node,
					ptr_type_node, NULL_TREE);
  return build_fn_decl (name, type);
}

// hook_call returns the statements of one hook call:
//   tmp = __builtin_return_address (0); hook (&this_fn, tmp);
// as gimplify_function_tree builds them for -finstrument-functions.
gimple_seq
hook_call (function *fun, tree hook_decl, location_t loc)
{
  gimple_seq seq = NULL;
  gcall *ra = gimple_build_call (builtin_decl_implicit (BUILT_IN_RETURN_ADDRESS),
				 1, integer_zero_node);
  tree tmp = gimple_in_ssa_p (fun) ? make_ssa_name (ptr_type_node)
				   : create_tmp_var (ptr_type_node, "hmb_site");
  gimple_call_set_lhs (ra, tmp);
  gimple_set_location (ra, loc);
  gimple_seq_add_stmt (&seq, ra);
  gcall *call = gimple_build_call (hook_decl, 2,
				   build_fold_addr_expr (region_decl (fun->decl)),
				   tmp);
  // A hook that throws would throw out of the exception cleanup below.
  gimple_call_set_nothrow (call, true);
  gimple_set_location (call, loc);
  gimple_seq_add_stmt (&seq, call);
  return seq;
}

// exit_on_exceptions makes the exit hook run when an exception leaves the
// function, as the try/finally of -finstrument-functions does: a cleanup
// region around all others whose landing pad calls the hook and resumes,
// and every statement that could throw out of the function (calls outside
// any region, the resumes of the outermost regions) now throws into it.
void
exit_on_exceptions (function *fun, tree exit_decl,
		    const std::vector<gimple *> &throwers)
{
  eh_region r = gen_eh_region_cleanup (NULL);
  // gen_eh_region put r first among the roots: make the others its
  // children, so that the unwinder's action chains include the cleanup.
  eh_region kids = r->next_peer;
  r->next_peer = NULL;
  r->inner = kids;
  for (eh_region k = kids; k; k = k->next_peer)
    k->outer = r;

  eh_landing_pad lp = gen_eh_landing_pad (r);
  basic_block pad = create_empty_bb (EXIT_BLOCK_PTR_FOR_FN (fun)->prev_bb);
  if (current_loops)
    add_bb_to_loop (pad, current_loops->tree_root);
  pad->count = profile_count::zero ();
  tree label = create_artificial_label (DECL_SOURCE_LOCATION (fun->decl));
  lp->post_landing_pad = label;
  EH_LANDING_PAD_NR (label) = lp->index;
  gimple_stmt_iterator gsi = gsi_start_bb (pad);
  gsi_insert_after (&gsi, gimple_build_label (label), GSI_NEW_STMT);
  gsi_insert_seq_after (&gsi, hook_call (fun, exit_decl, fun->function_end_locus),
			GSI_CONTINUE_LINKING);
  gsi_insert_after (&gsi, gimple_build_resx (r->index), GSI_CONTINUE_LINKING);

  for (gimple *stmt : throwers)
    {
      basic_block bb = gimple_bb (stmt);
      // A statement that throws internally ends its block, debug
      // statements after it included (last_stmt skips those).
      gimple_stmt_iterator last = gsi_last_bb (bb);
      if (stmt != gsi_stmt (last))
	split_block (bb, stmt);
      add_stmt_to_eh_lp (stmt, lp->index);
      edge e = make_edge (bb, pad, EDGE_EH);
      e->probability = profile_probability::never ();
    }
}

// The throttled functions' fast path, emitted inline (issue 36). Where
// -finstrument-functions' hooks (cshim/hooks/hooks.c) look at the
// thread's cache of throttled functions, count the visit and return, the
// plugin emits that check into the function itself:
//   c = hmbtrace_throttle_v1;                  (initial-exec TLS)
//   if (c && c->func[slot(&f)].addr == &f)     count the visit, throttled
//   else hmbtrace_func_enter_v1 (&f);          (cold)
// at entry, and before every return: if not throttled at entry, the same
// test with hmbtrace_func_exit_v1 on a miss. A throttled function's call
// then costs a load, a compare and an add instead of two calls, and the
// miss, the library's hook under its versioned name (on x86-64 through a
// stub that keeps the general registers: miss_stmt), is a cold block. The
// names carry the cache's version: an object built for this layout and
// linked with a library of another fails to link or to start, naming
// them.

// cache_var is the library's thread-local pointer to the calling thread's
// cache; the unit's own declaration if it has one (hmbtrace.h's). It is
// looked up in the symbol table each time, which keeps it from GCC's
// garbage collector (a plugin's static tree would not be a root).
tree
cache_var ()
{
  tree id = get_identifier ("hmbtrace_throttle_v1");
  if (symtab_node *n = symtab_node::get_for_asmname (id))
    if (VAR_P (n->decl))
      return n->decl;
  tree var = build_decl (UNKNOWN_LOCATION, VAR_DECL, id, ptr_type_node);
  SET_DECL_ASSEMBLER_NAME (var, id);
  TREE_PUBLIC (var) = 1;
  DECL_EXTERNAL (var) = 1;
  TREE_STATIC (var) = 1;
  TREE_USED (var) = 1;
  DECL_ARTIFICIAL (var) = 1;
  DECL_IGNORED_P (var) = 1;
  // Initial-exec, as hmbtrace.h declares it: one GOT entry and the thread
  // pointer, in a shared object too (no __tls_get_addr call). This also
  // enters it into the symbol table.
  set_decl_tls_model (var, TLS_MODEL_INITIAL_EXEC);
  return var;
}

// miss_fn is the library's hook under its versioned name: void name (void *).
tree
miss_fn (const char *name)
{
  tree id = get_identifier (name);
  if (symtab_node *n = symtab_node::get_for_asmname (id))
    if (TREE_CODE (n->decl) == FUNCTION_DECL)
      return n->decl;
  tree type = build_function_type_list (void_type_node, ptr_type_node,
					NULL_TREE);
  tree d = build_fn_decl (name, type);
  TREE_NOTHROW (d) = 1;
  cgraph_node::get_create (d);
  return d;
}

// kept_by_stub are the general registers a call may clobber, which the
// library's stubs save (cshim/lib/keepregs_amd64.c), by GCC's names.
const char *const kept_by_stub[] = {"ax", "dx", "cx", "si", "di",
				    "r8", "r9", "r10", "r11"};

// miss_stmt is the miss path's statement, a call of the library's hook for
// the function at region. On x86-64 it is an asm call of the hook's stub
// (cshim/lib/keepregs_amd64.c says how), which keeps the general
// registers: GCC sees no call, so the function needs no callee-saved
// register for what it uses after the miss, and a throttled call that
// only hits pushes and pops none. The other registers a call may clobber
// (the vector, x87 and mask registers the function's target has) the asm
// declares clobbered, which is what a call would do to them: saving them
// in the stub (XSAVEC) cost a measured call ~170 ns on this project's
// VM. The asm steps over the red zone, which a leaf may use, and reaches
// the stub through the GOT (no lazy binding's PLT, which may clobber r10
// and r11); it clobbers memory and the flags, as the hook's call would.
gimple *
miss_stmt (bool enter, tree region, location_t loc)
{
  tree fn = build_fold_addr_expr (region);
#if defined(__x86_64__)
  if (TYPE_PRECISION (ptr_type_node) == 64)
    {
      const char *text
	= enter ? "lea -128(%%rsp), %%rsp\n\tpush %0\n\t"
		  "call *hmbtrace_func_enter_keep_v1@GOTPCREL(%%rip)\n\t"
		  "lea 136(%%rsp), %%rsp"
		: "lea -128(%%rsp), %%rsp\n\tpush %0\n\t"
		  "call *hmbtrace_func_exit_keep_v1@GOTPCREL(%%rip)\n\t"
		  "lea 136(%%rsp), %%rsp";
      const char *r = "r";
      vec<tree, va_gc> *inputs = NULL, *clobbers = NULL;
      vec_safe_push (inputs,
		     build_tree_list (build_tree_list (NULL_TREE,
						       build_string (strlen (r) + 1, r)),
				      fn));
      std::vector<const char *> names = {"memory", "cc"};
      // accessible_reg_set is the function's target's (set_cfun switched
      // to it): xmm16-31 and k0-7 only with AVX-512, which GCC would
      // refuse as clobbers otherwise.
      for (unsigned i = 0; i < FIRST_PSEUDO_REGISTER; i++)
	if (this_target_hard_regs->x_call_used_regs[i] && !fixed_regs[i]
	    && TEST_HARD_REG_BIT (accessible_reg_set, i)
	    && std::none_of (std::begin (kept_by_stub), std::end (kept_by_stub),
			     [i] (const char *k) { return strcmp (k, reg_names[i]) == 0; }))
	  names.push_back (reg_names[i]);
      for (const char *n : names)
	vec_safe_push (clobbers,
		       build_tree_list (NULL_TREE, build_string (strlen (n) + 1, n)));
      gasm *a = gimple_build_asm_vec (text, inputs, NULL, clobbers, NULL);
      gimple_asm_set_volatile (a, true);
      gimple_set_location (a, loc);
      return a;
    }
#endif
  gcall *call = gimple_build_call (miss_fn (enter ? "hmbtrace_func_enter_v1"
					       : "hmbtrace_func_exit_v1"),
				   1, fn);
  gimple_call_set_nothrow (call, true);
  gimple_set_location (call, loc);
  return call;
}

// fast_path is whether the pass emits the inline check: where the
// function is optimised (at -O0 every call is kept as it is, the hooks'
// fast path being theirs), where the check's loads cannot throw, and
// where no call needs an abnormal edge (setjmp, non-local labels: a call
// of the library's hooks could then longjmp as far as GCC knows; the
// hooks, GCC's builtins, are leaves).
bool
fast_path (function *fun)
{
  return optimize > 0 && gimple_in_ssa_p (fun)
	 && !fun->can_throw_non_call_exceptions && !fun->calls_setjmp
	 && !fun->has_nonlocal_label;
}

// new_bb makes an empty block after after, in after's loop.
basic_block
new_bb (basic_block after, profile_count count)
{
  basic_block bb = create_empty_bb (after);
  if (current_loops)
    add_bb_to_loop (bb, after->loop_father);
  bb->count = count;
  return bb;
}

// emit_check makes at, a block with the single successor next (which has
// no PHIs), test the cache for the function at region: on a hit, count
// the visit if enter, and go on to next; on a miss call the library's
// hook (miss_stmt), in a cold block, and go on to next. It returns the edges into next: the hit's,
// and the miss's.
std::pair<edge, edge>
emit_check (basic_block at, tree region, bool enter, location_t loc)
{
  edge e = single_succ_edge (at);
  basic_block next = e->dest;
  profile_count n = at->count;
  basic_block chk = new_bb (at, n);
  basic_block hit = enter ? new_bb (chk, n) : NULL;
  basic_block cold = new_bb (hit ? hit : chk, profile_count::zero ());

  tree u64 = uint64_type_node;
  // The entries are uint64_t, as the library and hooks.c access them.
  tree alias = build_pointer_type (u64);

  // at: c = hmbtrace_throttle_v1; if (c != 0)
  gimple_stmt_iterator g = gsi_last_bb (at);
  tree var = cache_var ();
  tree c = make_ssa_name (TREE_TYPE (var));
  gimple *s = gimple_build_assign (c, var);
  gimple_set_location (s, loc);
  gsi_insert_after (&g, s, GSI_NEW_STMT);
  if (!useless_type_conversion_p (ptr_type_node, TREE_TYPE (c)))
    {
      tree p = make_ssa_name (ptr_type_node);
      gsi_insert_after (&g, gimple_build_assign (p, NOP_EXPR, c),
			GSI_NEW_STMT);
      c = p;
    }
  gsi_insert_after (&g, gimple_build_cond (NE_EXPR, c, null_pointer_node,
					   NULL_TREE, NULL_TREE),
		    GSI_NEW_STMT);
  redirect_edge_succ (e, chk);
  e->flags = EDGE_TRUE_VALUE;
  e->probability = profile_probability::very_likely ();
  edge ec = make_edge (at, cold, EDGE_FALSE_VALUE);
  ec->probability = profile_probability::very_unlikely ();

  // chk: a = (uint64) &f; e = c + (a & slot mask); if (e->addr == a).
  // Slot (a >> 4) % entries of 16-byte entries is the offset
  // a & ((entries - 1) << 4), as in the hooks.
  g = gsi_start_bb (chk);
  tree a = make_ssa_name (u64);
  gsi_insert_after (&g, gimple_build_assign (a, NOP_EXPR,
					     build_fold_addr_expr (region)),
		    GSI_NEW_STMT);
  tree off = make_ssa_name (sizetype);
  tree masked = make_ssa_name (u64);
  gsi_insert_after (&g, gimple_build_assign (masked, BIT_AND_EXPR, a,
					     build_int_cst (u64, (HMB_THROTTLE_ENTRIES - 1) << 4)),
		    GSI_NEW_STMT);
  gsi_insert_after (&g, gimple_build_assign (off, NOP_EXPR, masked),
		    GSI_NEW_STMT);
  tree ent = make_ssa_name (ptr_type_node);
  gsi_insert_after (&g, gimple_build_assign (ent, POINTER_PLUS_EXPR, c, off),
		    GSI_NEW_STMT);
  tree cached = make_ssa_name (u64);
  tree addr_ref = build2 (MEM_REF, u64, ent,
			  build_int_cst (alias, offsetof (struct hmbtrace_throttle_v1, func[0].addr)));
  s = gimple_build_assign (cached, addr_ref);
  gimple_set_location (s, loc);
  gsi_insert_after (&g, s, GSI_NEW_STMT);
  gsi_insert_after (&g, gimple_build_cond (EQ_EXPR, cached, a, NULL_TREE,
					   NULL_TREE),
		    GSI_NEW_STMT);
  edge eh = make_edge (chk, hit ? hit : next, EDGE_TRUE_VALUE);
  eh->probability = profile_probability::very_likely ();
  edge em = make_edge (chk, cold, EDGE_FALSE_VALUE);
  em->probability = profile_probability::very_unlikely ();

  if (hit)
    {
      // hit: e->after++, in one instruction on x86-64 (hmbtrace.h's
      // hmbtrace_count_visit): a signal handler's visit of the same
      // function cannot fall between a load and a store.
      g = gsi_start_bb (hit);
      tree after = build2 (MEM_REF, u64, ent,
			   build_int_cst (alias, offsetof (struct hmbtrace_throttle_v1, func[0].after)));
#if defined(__x86_64__)
      vec<tree, va_gc> *outputs = NULL;
      const char *plus_m = "+m";
      vec_safe_push (outputs,
		     build_tree_list (build_tree_list (NULL_TREE,
						       build_string (strlen (plus_m) + 1, plus_m)),
				      after));
      gasm *add = gimple_build_asm_vec ("addq $1, %0", NULL, outputs, NULL,
					NULL);
      gimple_asm_set_volatile (add, true);
      gimple_set_location (add, loc);
      gsi_insert_after (&g, add, GSI_NEW_STMT);
#else
      tree old = make_ssa_name (u64), inc = make_ssa_name (u64);
      gsi_insert_after (&g, gimple_build_assign (old, after), GSI_NEW_STMT);
      gsi_insert_after (&g, gimple_build_assign (inc, PLUS_EXPR, old,
						 build_int_cst (u64, 1)),
			GSI_NEW_STMT);
      gsi_insert_after (&g, gimple_build_assign (unshare_expr (after), inc),
			GSI_NEW_STMT);
#endif
      eh = make_single_succ_edge (hit, next, EDGE_FALLTHRU);
    }

  // cold: the library's hook, which measures the call or learns that it
  // is throttled.
  g = gsi_start_bb (cold);
  gsi_insert_after (&g, miss_stmt (enter, region, loc), GSI_NEW_STMT);
  return std::make_pair (eh, make_single_succ_edge (cold, next, EDGE_FALLTHRU));
}

// inline_enter emits the entry's check before the function's first block,
// and returns whether the entry found the function throttled: a boolean
// SSA name for the exits' checks.
tree
inline_enter (function *fun, tree region)
{
  // A block of its own, then an empty one it joins into: the first block
  // may be a loop header (tail recursion made into a loop) or have PHIs.
  basic_block at
    = split_edge (single_succ_edge (ENTRY_BLOCK_PTR_FOR_FN (fun)));
  basic_block join = split_edge (single_succ_edge (at));
  location_t loc = DECL_SOURCE_LOCATION (fun->decl);
  std::pair<edge, edge> in
    = emit_check (at, region, true, loc);
  tree hit = make_ssa_name (boolean_type_node);
  gphi *phi = create_phi_node (hit, join);
  add_phi_arg (phi, boolean_true_node, in.first, loc);
  add_phi_arg (phi, boolean_false_node, in.second, loc);
  return hit;
}

// inline_exit emits the exit's check before ret. A call whose entry found
// the function throttled leaves without looking again: throttling is never
// undone, and the library's hook would find the function throttled and
// return (were its entry taken by another function in between, or emptied
// by hmb_finalize, it would learn it again, or count a probe after the
// end). That test, of a value the entry left in a register, is what lets
// the compiler give the throttled path its own copy of a small body,
// without a call: a leaf again, with no frame to set up. A call measured
// at its entry looks up the cache as the hooks do.
void
inline_exit (gimple *ret, tree region, tree entered_throttled)
{
  basic_block bb = gimple_bb (ret);
  gimple_stmt_iterator g = gsi_for_stmt (ret);
  gsi_prev (&g);
  edge e = gsi_end_p (g) ? split_block_after_labels (bb)
			 : split_block (bb, gsi_stmt (g));
  basic_block at = e->src, next = e->dest;
  basic_block look = new_bb (at, profile_count::zero ());
  g = gsi_last_bb (at);
  gsi_insert_after (&g, gimple_build_cond (NE_EXPR, entered_throttled,
					   boolean_false_node, NULL_TREE,
					   NULL_TREE),
		    GSI_NEW_STMT);
  e->flags = EDGE_TRUE_VALUE;
  e->probability = profile_probability::very_likely ();
  edge el = make_edge (at, look, EDGE_FALSE_VALUE);
  el->probability = profile_probability::very_unlikely ();
  make_single_succ_edge (look, next, EDGE_FALLTHRU);
  emit_check (look, region, false, gimple_location (ret));
}

const pass_data pass_data_hmbtrace = {
  GIMPLE_PASS,		// type
  "hmbtrace",		// name
  OPTGROUP_NONE,	// optinfo_flags
  TV_NONE,		// tv_id
  PROP_gimple_any | PROP_cfg, // properties_required
  0,			// properties_provided
  0,			// properties_destroyed
  0,			// todo_flags_start
  0,			// todo_flags_finish
};

class pass_hmbtrace : public gimple_opt_pass
{
public:
  pass_hmbtrace (gcc::context *ctxt)
    : gimple_opt_pass (pass_data_hmbtrace, ctxt)
  {}

  unsigned int execute (function *fun) final override;
};

unsigned int
pass_hmbtrace::execute (function *fun)
{
  tree fndecl = fun->decl;
  if (fortran_decl_p (fndecl))
    named.push_back (fndecl);
  const char *why = NULL;
  if (!instrumented (fndecl, &why))
    {
      if (verbose)
	fprintf (stderr, "hmbtrace-gcc: %s: not instrumented: %s\n",
		 region_name (region_decl (fndecl)).c_str (), why);
      return 0;
    }
  if (verbose)
    fprintf (stderr, "hmbtrace-gcc: %s: instrumented\n",
	     region_name (region_decl (fndecl)).c_str ());
  tree enter_decl = hook (BUILT_IN_PROFILE_FUNC_ENTER, "__cyg_profile_func_enter");
  tree exit_decl = hook (BUILT_IN_PROFILE_FUNC_EXIT, "__cyg_profile_func_exit");

  // Collect first: the edits below add statements and blocks.
  std::vector<gimple *> returns, throwers;
  // A function with abnormal edges (setjmp, non-local gotos) keeps its
  // blocks as they are: splitting them is not safe. Exceptions leave it
  // without the exit hook.
  bool eh = fun->eh && !fun->calls_setjmp && !fun->has_nonlocal_label;
  basic_block bb;
  FOR_EACH_BB_FN (bb, fun)
    for (gimple_stmt_iterator gsi = gsi_start_bb (bb); !gsi_end_p (gsi);
	 gsi_next (&gsi))
      {
	gimple *stmt = gsi_stmt (gsi);
	if (gimple_code (stmt) == GIMPLE_RETURN)
	  returns.push_back (stmt);
	else if (eh && lookup_stmt_eh_lp_fn (fun, stmt) == 0
		 && stmt_could_throw_p (fun, stmt))
	  throwers.push_back (stmt);
      }

  if (fast_path (fun))
    {
      tree region = region_decl (fndecl);
      tree entered_throttled = inline_enter (fun, region);
      for (gimple *ret : returns)
	inline_exit (ret, region, entered_throttled);
      // An exception leaves through the hook, as before: a throttled
      // function's exit hook returns at once.
      if (!throwers.empty ())
	exit_on_exceptions (fun, exit_decl, throwers);
      free_dominance_info (CDI_DOMINATORS);
      free_dominance_info (CDI_POST_DOMINATORS);
      mark_virtual_operands_for_renaming (fun);
      return TODO_update_ssa_only_virtuals;
    }

  // The entry hook in a block of its own: the first block may be a loop
  // header (tail recursion made into a loop) or have PHIs.
  basic_block entry
    = split_edge (single_succ_edge (ENTRY_BLOCK_PTR_FOR_FN (fun)));
  gimple_stmt_iterator gsi = gsi_start_bb (entry);
  gsi_insert_seq_after (&gsi, hook_call (fun, enter_decl,
					 DECL_SOURCE_LOCATION (fndecl)),
			GSI_CONTINUE_LINKING);

  for (gimple *ret : returns)
    {
      gimple_stmt_iterator g = gsi_for_stmt (ret);
      gsi_insert_seq_before (&g, hook_call (fun, exit_decl,
					    gimple_location (ret)),
			     GSI_SAME_STMT);
    }

  if (!throwers.empty ())
    exit_on_exceptions (fun, exit_decl, throwers);

  free_dominance_info (CDI_DOMINATORS);
  free_dominance_info (CDI_POST_DOMINATORS);
  if (gimple_in_ssa_p (fun))
    {
      // The hook calls read and write memory: give them virtual operands.
      mark_virtual_operands_for_renaming (fun);
      return TODO_update_ssa_only_virtuals;
    }
  return 0;
}

} // namespace

int
plugin_init (struct plugin_name_args *info, struct plugin_gcc_version *version)
{
  if (!plugin_default_version_check (version, &gcc_version))
    {
      error ("hmbtrace-gcc: built for GCC %s, loaded by GCC %s: rebuild it "
	     "(make cshim) with the plugin headers of that GCC",
	     gcc_version.basever, version->basever);
      return 1;
    }
  for (int i = 0; i < info->argc; i++)
    {
      const char *k = info->argv[i].key, *v = info->argv[i].value;
      if (strcmp (k, "keep-system") == 0)
	keep_system = true;
      else if (strcmp (k, "verbose") == 0)
	verbose = true;
      else if (strcmp (k, "system-dir") == 0 && v && *v)
	system_dirs.push_back (v);
      else if (strcmp (k, "rules") == 0 && v)
	{
	  if (!read_rules (v))
	    return 1;
	}
      else
	{
	  error ("hmbtrace-gcc: unknown argument %qs (keep-system, "
		 "system-dir=DIR, rules=FILE, verbose)", k);
	  return 1;
	}
    }

  // Before ehdisp, the first pass after IPA that changes the body: every
  // IPA pass (inlining among them) is done with the function, the
  // exception regions still have their resumes (GIMPLE_RESX) for the
  // cleanup to chain into, and all optimisation passes are still to come.
  // ehdisp is in the pipeline at every optimisation level, -O0 included.
  struct register_pass_info pass;
  pass.pass = new pass_hmbtrace (g);
  pass.reference_pass_name = "ehdisp";
  pass.ref_pass_instance_number = 1;
  pass.pos_op = PASS_POS_INSERT_BEFORE;
  register_callback (info->base_name, PLUGIN_PASS_MANAGER_SETUP, NULL, &pass);
  register_callback (info->base_name, PLUGIN_ALL_IPA_PASSES_START, take_names, NULL);
  register_callback (info->base_name, PLUGIN_FINISH_UNIT, write_names, NULL);

  static struct plugin_info about = {
    "0.1.0",
    "instruments functions after inlining with -finstrument-functions' hooks",
  };
  register_callback (info->base_name, PLUGIN_INFO, NULL, &about);
  return 0;
}
