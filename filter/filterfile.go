package filter

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// The keywords of a filter file. They are case-sensitive.
const (
	kwRegionBegin = "SCOREP_REGION_NAMES_BEGIN"
	kwRegionEnd   = "SCOREP_REGION_NAMES_END"
	kwFileBegin   = "SCOREP_FILE_NAMES_BEGIN"
	kwFileEnd     = "SCOREP_FILE_NAMES_END"
	kwExclude     = "EXCLUDE"
	kwInclude     = "INCLUDE"
	kwMangled     = "MANGLED"
	kwDemangled   = "DEMANGLED"
)

var keywords = [...]string{kwRegionBegin, kwRegionEnd, kwFileBegin, kwFileEnd, kwExclude, kwInclude, kwMangled, kwDemangled}

// keywordLike reports whether a token reads as a keyword, correctly spelled
// or not: a keyword in any letter case, or SCOREP_ followed by upper-case
// letters, digits and underscores. Such a token that is not exactly a
// keyword is an error rather than a pattern, so a misspelt END does not
// silently become a pattern; EscapeName escapes names of this form.
func keywordLike(tok string) bool {
	for _, k := range keywords {
		if strings.EqualFold(tok, k) {
			return true
		}
	}
	rest, ok := strings.CutPrefix(tok, "SCOREP_")
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !('A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Filter is a parsed filter file. The zero value and a nil *Filter exclude
// nothing. A Filter is immutable after parsing and safe for concurrent use.
type Filter struct {
	regions ruleList
	files   ruleList
}

// Excluded reports whether a region is filtered out: its source file is
// excluded by the SCOREP_FILE_NAMES rules or its name by the
// SCOREP_REGION_NAMES rules (Score-P's rule; an INCLUDE of the name does not
// bring back a region of an excluded file). An empty file means the file is
// unknown and the file rules do not apply. Excluded does not allocate.
func (f *Filter) Excluded(region, file string) bool {
	if f == nil {
		return false
	}
	if file != "" {
		if _, exclude := f.files.decide(file); exclude {
			return true
		}
	}
	_, exclude := f.regions.decide(region)
	return exclude
}

// SyntaxError reports malformed filter-file input.
type SyntaxError struct {
	File   string // the name given to Parse
	Line   int    // 1-based
	Column int    // 1-based byte column in the line; 0 if not known
	Reason string
	Err    error // the underlying *PatternError, if any
}

func (e *SyntaxError) Error() string {
	if e.Column > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// MaxFileSize bounds a filter file. Real ones are a few KiB; the bound keeps
// a wrong path (a device, a log file) from being read without end.
const MaxFileSize = 16 << 20

// ParseFile reads and parses the filter file at path. It must be a regular
// file or a pipe (a shell's <(...)) of at most MaxFileSize bytes.
func ParseFile(path string) (*Filter, error) {
	fh, err := openFilterFile(path)
	if err != nil {
		return nil, fmt.Errorf("filter file: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("filter file: %w", err)
	}
	switch mode := fi.Mode(); {
	case mode.IsRegular():
		if fi.Size() > MaxFileSize {
			return nil, fmt.Errorf("filter file %s: %d bytes, more than a filter file may have (%d)", path, fi.Size(), MaxFileSize)
		}
	case mode&os.ModeNamedPipe != 0:
	default:
		return nil, fmt.Errorf("filter file %s: not a regular file (%v)", path, mode.Type())
	}
	// A regular file may grow while it is read, and a pipe has no size.
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: reading filter file: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("filter file %s: more than %d bytes, more than a filter file may have", path, MaxFileSize)
	}
	return Parse(path, bytes.NewReader(data))
}

// pipeWait bounds how long ParseFile waits for a pipe's writer: opening a
// pipe blocks until one opens it, and a pipe nobody writes to would stop
// the program at Start for ever.
var pipeWait = 10 * time.Second

// openFilterFile opens path, waiting at most pipeWait for the writer of a
// pipe. A writer that comes later finds the pipe opened and closed.
func openFilterFile(path string) (*os.File, error) {
	if fi, err := os.Stat(path); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	t := time.NewTimer(pipeWait)
	defer t.Stop()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-t.C:
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("%s: a pipe that nobody writes to (waited %v)", path, pipeWait)
	}
}

// Parse reads a filter file from r; name is used in error messages. Empty
// input (or input with only comments) gives a Filter that excludes nothing.
// A malformed file gives a *SyntaxError naming the line and the reason.
func Parse(name string, r io.Reader) (*Filter, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: reading filter file: %w", name, err)
	}
	p := parser{name: name}
	for rest := data; len(rest) > 0; {
		line := rest
		if nl := bytes.IndexByte(rest, '\n'); nl >= 0 {
			line, rest = rest[:nl], rest[nl+1:]
		} else {
			rest = nil
		}
		p.line++
		if err := p.scanLine(line); err != nil {
			return nil, err
		}
	}
	if err := p.finish(); err != nil {
		return nil, err
	}
	return &p.filter, nil
}

type blockKind int8

const (
	noBlock blockKind = iota
	regionBlock
	fileBlock
)

type parser struct {
	name   string
	line   int
	column int // of the token being processed

	block               blockKind
	blockLine, blockCol int
	inRule              bool
	ruleExclude         bool
	ruleLine, ruleCol   int
	rulePatterns        int
	filter              Filter
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'
}

// scanLine splits a line into tokens at unescaped white space and stops at
// an unescaped '#'. A backslash keeps the next byte in the token (the pattern
// matcher interprets the escape later).
func (p *parser) scanLine(line []byte) error {
	i := 0
	for i < len(line) {
		c := line[i]
		if isBlank(c) {
			i++
			continue
		}
		if c == '#' {
			return nil
		}
		start := i
		for i < len(line) && !isBlank(line[i]) && line[i] != '#' {
			if line[i] == '\\' {
				if i+1 == len(line) {
					return &SyntaxError{File: p.name, Line: p.line, Column: i + 1,
						Reason: "backslash at end of line (a pattern cannot continue on the next line)"}
				}
				i++
			}
			i++
		}
		p.column = start + 1
		if err := p.token(string(line[start:i])); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) errorf(format string, args ...any) error {
	return &SyntaxError{File: p.name, Line: p.line, Column: p.column, Reason: fmt.Sprintf(format, args...)}
}

func blockName(b blockKind) string {
	if b == fileBlock {
		return "SCOREP_FILE_NAMES"
	}
	return "SCOREP_REGION_NAMES"
}

func (p *parser) token(tok string) error {
	switch tok {
	case kwRegionBegin, kwFileBegin:
		if p.block != noBlock {
			return p.errorf("%s inside the %s block opened at line %d", tok, blockName(p.block), p.blockLine)
		}
		p.block = regionBlock
		if tok == kwFileBegin {
			p.block = fileBlock
		}
		p.blockLine, p.blockCol = p.line, p.column
	case kwRegionEnd, kwFileEnd:
		want := regionBlock
		if tok == kwFileEnd {
			want = fileBlock
		}
		switch p.block {
		case want:
		case noBlock:
			return p.errorf("%s without %s_BEGIN", tok, blockName(want))
		default:
			return p.errorf("%s inside the %s block opened at line %d", tok, blockName(p.block), p.blockLine)
		}
		if err := p.endRule(); err != nil {
			return err
		}
		p.block = noBlock
	case kwExclude, kwInclude:
		if p.block == noBlock {
			return p.errorf("%s outside a SCOREP_REGION_NAMES or SCOREP_FILE_NAMES block", tok)
		}
		if err := p.endRule(); err != nil {
			return err
		}
		p.inRule, p.ruleExclude = true, tok == kwExclude
		p.ruleLine, p.ruleCol, p.rulePatterns = p.line, p.column, 0
	case kwMangled, kwDemangled:
		// Score-P applies MANGLED rules to the mangled name; our regions
		// have only one name, so the keyword is accepted and has no effect.
		if p.block != regionBlock || !p.inRule {
			return p.errorf("%s is only allowed after EXCLUDE or INCLUDE in a SCOREP_REGION_NAMES block", tok)
		}
	default:
		if keywordLike(tok) {
			return p.errorf("unknown keyword %q (keywords are case-sensitive; write %q to match this name)", tok, `\`+tok)
		}
		if p.block == noBlock {
			return p.errorf("pattern %q outside a SCOREP_REGION_NAMES or SCOREP_FILE_NAMES block", tok)
		}
		if !p.inRule {
			return p.errorf("pattern %q before EXCLUDE or INCLUDE", tok)
		}
		if pr := checkPattern(tok); pr.kind != noProblem {
			perr := pr.error(tok)
			return &SyntaxError{File: p.name, Line: p.line, Column: p.column + perr.Offset, Reason: perr.Error(), Err: perr}
		}
		if p.block == fileBlock {
			p.filter.files.add(tok, p.ruleExclude)
		} else {
			p.filter.regions.add(tok, p.ruleExclude)
		}
		p.rulePatterns++
	}
	return nil
}

// endRule closes the current EXCLUDE/INCLUDE rule, which must have had a
// pattern (Score-P ignores an empty rule; here it is almost certainly a
// mistake, so it is an error).
func (p *parser) endRule() error {
	if p.inRule && p.rulePatterns == 0 {
		kw := kwInclude
		if p.ruleExclude {
			kw = kwExclude
		}
		return &SyntaxError{File: p.name, Line: p.ruleLine, Column: p.ruleCol, Reason: kw + " without a pattern"}
	}
	p.inRule = false
	return nil
}

func (p *parser) finish() error {
	if p.block == noBlock {
		return nil
	}
	// Score-P silently accepts a missing END; a truncated file should not be.
	return &SyntaxError{File: p.name, Line: p.blockLine, Column: p.blockCol,
		Reason: fmt.Sprintf("%s_BEGIN is not closed by %s_END before the end of the file", blockName(p.block), blockName(p.block))}
}
