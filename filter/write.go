package filter

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Write writes a filter file that excludes exactly the named regions (and
// nothing else) in the form Parse and Score-P read. Each name is escaped with
// EscapeName, so names containing wildcard characters, white space, '#' or
// keywords match literally. The comment, if not empty, is written first with
// each of its lines prefixed by "# ". An empty name or one containing a line
// break cannot be represented and is an error; then nothing is written.
func Write(w io.Writer, excludeRegions []string, comment string) error {
	var b bytes.Buffer
	if comment != "" {
		for line := range strings.SplitSeq(comment, "\n") {
			if line == "" {
				b.WriteString("#\n")
				continue
			}
			b.WriteString("# ")
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	b.WriteString(kwRegionBegin + "\n")
	if len(excludeRegions) > 0 {
		b.WriteString("  " + kwExclude + "\n")
	}
	for i, name := range excludeRegions {
		if name == "" {
			return fmt.Errorf("filter: region %d: an empty name cannot be written to a filter file", i)
		}
		if strings.IndexByte(name, '\n') >= 0 {
			return fmt.Errorf("filter: region %d %q: a name containing a line break cannot be written to a filter file", i, name)
		}
		b.WriteString("    ")
		b.WriteString(EscapeName(name))
		b.WriteByte('\n')
	}
	b.WriteString(kwRegionEnd + "\n")
	_, err := w.Write(b.Bytes())
	return err
}
