// Package filter owns region-name filtering: it parses and writes filter
// files in Score-P's filter-file syntax (HMB_FILTER_FILE, `hmbtrace score -g`)
// and matches region and source-file names against them and against plain
// wildcard pattern lists (HMB_METRICS_REGIONS, `hmbtrace variation -sync`).
//
// # Filter files
//
// A filter file holds blocks of rules:
//
//	SCOREP_FILE_NAMES_BEGIN
//	  EXCLUDE */third_party/*
//	SCOREP_FILE_NAMES_END
//	SCOREP_REGION_NAMES_BEGIN
//	  EXCLUDE *            # everything ...
//	  INCLUDE solve*       # ... except the solver
//	          main
//	SCOREP_REGION_NAMES_END
//
// Tokens are separated by white space (space, tab, CR, VT, FF) and line
// breaks; '#' starts a comment to the end of the line. A backslash keeps the
// next character in the token, so "\ " and "\#" are a literal space and '#'
// inside a pattern; a backslash at the end of a line is an error. Keywords
// are case-sensitive. EXCLUDE or INCLUDE starts a rule that takes every
// following pattern, over any number of lines, up to the next keyword. Blocks
// may repeat; their rules are appended in order.
//
// Within each kind of block the rules are evaluated in order and the last
// rule whose pattern matches decides; a name no rule matches is included. A
// region is excluded if its source file is excluded by the file rules or its
// name by the region rules (Score-P's rule), so an INCLUDE of a region name
// does not bring back a region whose file is excluded. A region with no known
// file (empty file name) is judged by its name only, as Score-P does for
// regions without a file.
//
// MANGLED and DEMANGLED after EXCLUDE or INCLUDE in a region block are
// accepted for compatibility and have no effect: regions here have a single
// name, so a MANGLED rule matches that name.
//
// Where Score-P is lenient this package reports an error instead: a missing
// END, a rule without a pattern, a token that looks like a keyword but is not
// one (wrong case, misspelt SCOREP_... name; write a backslash before its
// first character to match such a name), and a malformed bracket expression
// (glibc's fnmatch would read an unterminated '[' as a literal). Every error
// is a *SyntaxError with the file name, line and column.
//
// # Wildcards
//
// Patterns follow fnmatch(3) without flags, as Score-P calls it:
//
//   - any string, including the empty one and '/'
//     ?          one character
//     [abc]      one of the characters; [a-z] a range; [!a] or [^a] any other
//     character; a ']' first in the set is a member; [:alpha:] and
//     the other POSIX classes, with their ASCII ("C" locale) meaning;
//     [.c.] and [=c=] for a single character c
//     \c         the character c itself
//
// A character is one UTF-8 encoded rune, or one byte that is not valid UTF-8;
// literal characters compare byte for byte. A reversed range such as [z-a]
// is an error.
package filter
