// Package otf2print runs Debian's otf2-print (package otf2-tools) on an OTF2
// archive and parses its event listing, so that tests can check archives
// against the reference reader without an OTF2 reader of their own.
package otf2print

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// DebianPackage provides otf2-print.
const DebianPackage = "otf2-tools"

// Timeout bounds one otf2-print run: it spins forever on some malformed
// archives (an anchor whose chunk size differs from the files').
const Timeout = 120 * time.Second

// Path returns the path of otf2-print, or an error that names the package
// to install.
func Path() (string, error) {
	p, err := exec.LookPath("otf2-print")
	if err != nil {
		return "", fmt.Errorf("otf2-print not found (install the Debian package %s): %w", DebianPackage, err)
	}
	return p, nil
}

// Run runs otf2-print with args and the anchor file (ARCHIVE/traces.otf2)
// and returns its standard output. It fails if otf2-print exits non-zero,
// times out, or writes anything to standard error: some of its errors
// still exit 0.
func Run(anchor string, args ...string) ([]byte, error) {
	p, err := Path()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, append(append([]string(nil), args...), anchor)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("otf2-print %s: no result after %v", anchor, Timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("otf2-print %s: %w: %s", anchor, err, bytes.TrimSpace(stderr.Bytes()))
	}
	if stderr.Len() > 0 {
		return nil, fmt.Errorf("otf2-print %s: exit 0 but stderr: %s", anchor, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

// Check runs `otf2-print -Werror --silent`, which reads every definition
// and event and turns warnings (e.g. definitions out of order) into errors.
func Check(anchor string) error {
	_, err := Run(anchor, "-Werror", "--silent")
	return err
}

// Events runs otf2-print on the archive and returns its events, merged over
// locations in time order as otf2-print prints them.
func Events(anchor string) ([]Event, error) {
	out, err := Run(anchor)
	if err != nil {
		return nil, err
	}
	evs, err := Parse(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("otf2-print %s: %w", anchor, err)
	}
	return evs, nil
}

// Event is one event of the listing.
type Event struct {
	Name     string // ENTER, LEAVE, METRIC, MPI_SEND, ...
	Location uint64
	Time     uint64
	// Attributes is the rest of the line, e.g. `Region: "main" <0>`.
	Attributes string
	// More holds continuation lines (e.g. ADDITIONAL ATTRIBUTES), trimmed.
	More []string
}

// Parse reads otf2-print output. Lines before the dashed line under the
// "Event Location Timestamp Attributes" header are skipped; output without
// an event listing (--silent) gives no events.
func Parse(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var evs []Event
	inEvents := false
	for line := 0; sc.Scan(); {
		line++
		s := sc.Text()
		if !inEvents {
			inEvents = strings.HasPrefix(s, "-----")
			continue
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		if s[0] == ' ' || s[0] == '\t' {
			if len(evs) == 0 {
				return nil, fmt.Errorf("line %d: continuation line before any event: %q", line, s)
			}
			e := &evs[len(evs)-1]
			e.More = append(e.More, strings.TrimSpace(s))
			continue
		}
		e, err := parseEventLine(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return evs, nil
}

// parseEventLine splits `NAME LOCATION TIMESTAMP  ATTRIBUTES`.
func parseEventLine(s string) (Event, error) {
	var fields [3]string
	rest := s
	for i := range fields {
		rest = strings.TrimLeft(rest, " ")
		j := strings.IndexByte(rest, ' ')
		if j < 0 {
			j = len(rest)
		}
		fields[i], rest = rest[:j], rest[j:]
		if fields[i] == "" {
			return Event{}, fmt.Errorf("event line %q has fewer than 3 fields", s)
		}
	}
	loc, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return Event{}, fmt.Errorf("event line %q: location: %w", s, err)
	}
	ts, err := strconv.ParseUint(fields[2], 10, 64)
	if err != nil {
		return Event{}, fmt.Errorf("event line %q: timestamp: %w", s, err)
	}
	return Event{Name: fields[0], Location: loc, Time: ts, Attributes: strings.TrimLeft(rest, " ")}, nil
}

// Format writes e as otf2-print prints it (printf "%-32s %15lu %20s  %s").
func Format(w io.Writer, e Event) error {
	if _, err := fmt.Fprintf(w, "%-32s %15d %20d  %s\n", e.Name, e.Location, e.Time, e.Attributes); err != nil {
		return err
	}
	for _, m := range e.More {
		if _, err := fmt.Fprintf(w, "%71s%s\n", "", m); err != nil {
			return err
		}
	}
	return nil
}

// Fields splits the attributes at top-level ", " (not inside quotes or
// parentheses) into "Key: value" pairs; a part without ": " gets key "".
func (e Event) Fields() []Field {
	var out []Field
	for _, part := range splitTop(e.Attributes, ", ") {
		k, v, ok := strings.Cut(part, ": ")
		if !ok {
			k, v = "", part
		}
		out = append(out, Field{Key: k, Value: v})
	}
	return out
}

// Field is one "Key: value" attribute.
type Field struct{ Key, Value string }

// Field returns the value of the first attribute named key.
func (e Event) Field(key string) (string, bool) {
	for _, f := range e.Fields() {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// Region parses `Region: "name" <ref>` of ENTER and LEAVE events.
func (e Event) Region() (name string, ref uint64, err error) {
	v, ok := e.Field("Region")
	if !ok {
		return "", 0, fmt.Errorf("%s event has no Region attribute: %q", e.Name, e.Attributes)
	}
	return parseRef(v)
}

// parseRef parses `"name" <ref>`.
func parseRef(v string) (string, uint64, error) {
	i := strings.LastIndex(v, "\" <")
	if len(v) < 5 || v[0] != '"' || i < 1 || !strings.HasSuffix(v, ">") {
		return "", 0, fmt.Errorf("want \"name\" <ref>, got %q", v)
	}
	ref, err := strconv.ParseUint(v[i+3:len(v)-1], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("reference in %q: %w", v, err)
	}
	return v[1:i], ref, nil
}

// MetricValue is one value of a METRIC event.
type MetricValue struct {
	Member string // the metric member's name
	Type   string // UINT64, INT64 or DOUBLE
	Value  string // as printed
}

// Metric parses `Metric: REF, N Values: ("name" <m>; TYPE; VALUE), ...`
// (`1 Value: ...` for one value).
func (e Event) Metric() (ref uint64, values []MetricValue, err error) {
	parts := splitTop(e.Attributes, ", ")
	if len(parts) < 2 || !strings.HasPrefix(parts[0], "Metric: ") {
		return 0, nil, fmt.Errorf("not a metric: %q", e.Attributes)
	}
	if ref, err = strconv.ParseUint(strings.TrimPrefix(parts[0], "Metric: "), 10, 64); err != nil {
		return 0, nil, fmt.Errorf("metric reference in %q: %w", e.Attributes, err)
	}
	// otf2-print writes "1 Value: " for a single value.
	n, first, ok := strings.Cut(parts[1], " Values: ")
	if !ok {
		n, first, ok = strings.Cut(parts[1], " Value: ")
	}
	if !ok {
		return 0, nil, fmt.Errorf("no value count in %q", e.Attributes)
	}
	count, err := strconv.Atoi(n)
	if err != nil {
		return 0, nil, fmt.Errorf("value count in %q: %w", e.Attributes, err)
	}
	vals := append([]string{first}, parts[2:]...)
	if len(vals) != count {
		return 0, nil, fmt.Errorf("%d values announced, %d found in %q", count, len(vals), e.Attributes)
	}
	for _, v := range vals {
		if len(v) < 2 || v[0] != '(' || v[len(v)-1] != ')' {
			return 0, nil, fmt.Errorf("metric value %q is not parenthesized", v)
		}
		f := splitTop(v[1:len(v)-1], "; ")
		if len(f) != 3 {
			return 0, nil, fmt.Errorf("metric value %q: want (member; type; value)", v)
		}
		name, _, err := parseRef(f[0])
		if err != nil {
			return 0, nil, fmt.Errorf("metric value %q: %w", v, err)
		}
		values = append(values, MetricValue{Member: name, Type: f[1], Value: f[2]})
	}
	return ref, values, nil
}

// splitTop splits s at sep where sep is outside double quotes and
// parentheses.
func splitTop(s, sep string) []string {
	if s == "" {
		return nil
	}
	var parts []string
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && strings.HasPrefix(s[i:], sep):
			parts = append(parts, s[start:i])
			start = i + len(sep)
			i += len(sep) - 1
		}
	}
	return append(parts, s[start:])
}

// ByLocation groups events by location, keeping each location's order.
func ByLocation(evs []Event) map[uint64][]Event {
	m := make(map[uint64][]Event)
	for _, e := range evs {
		m[e.Location] = append(m[e.Location], e)
	}
	return m
}
