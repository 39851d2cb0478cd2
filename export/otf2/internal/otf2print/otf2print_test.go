package otf2print

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

func parseFile(t *testing.T, name string) []Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	evs, err := Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestParseMPI(t *testing.T) {
	evs := parseFile(t, "mpi.txt")
	if len(evs) != 36 {
		t.Fatalf("got %d events, want 36", len(evs))
	}
	counts := map[uint64]int{}
	for loc, l := range ByLocation(evs) {
		counts[loc] = len(l)
	}
	if want := map[uint64]int{0: 13, 1: 10, 2: 13}; !reflect.DeepEqual(counts, want) {
		t.Errorf("events per location %v, want %v", counts, want)
	}
	e := evs[0]
	name, ref, err := e.Region()
	if e.Name != "ENTER" || e.Location != 0 || e.Time != 1000 || err != nil || name != "main" || ref != 0 {
		t.Errorf("first event %+v region %q <%d> %v", e, name, ref, err)
	}
	send := evs[2]
	want := []Field{
		{"Receiver", `1 ("Master thread" <1>)`},
		{"Communicator", `"MPI_COMM_WORLD" <0>`},
		{"Tag", "42"},
		{"Length", "1024"},
	}
	if send.Name != "MPI_SEND" || !reflect.DeepEqual(send.Fields(), want) {
		t.Errorf("send %+v fields %q, want %q", send, send.Fields(), want)
	}
	if v, ok := send.Field("Tag"); !ok || v != "42" {
		t.Errorf("Field(Tag) = %q, %v", v, ok)
	}
	if _, ok := send.Field("Nope"); ok {
		t.Error("Field(Nope) found")
	}
	if _, _, err := send.Region(); err == nil {
		t.Error("Region of MPI_SEND: no error")
	}
}

func TestParseMetrics(t *testing.T) {
	evs := parseFile(t, "metrics.txt")
	var n30 int
	for _, e := range evs {
		if e.Name != "METRIC" {
			continue
		}
		ref, vals, err := e.Metric()
		if err != nil {
			t.Fatal(err)
		}
		switch ref {
		case 1:
			if len(vals) != 2 || vals[0].Member != "temperature" || vals[0].Type != "DOUBLE" || vals[1].Type != "INT64" {
				t.Errorf("class 1 values %+v", vals)
			}
		case 2:
			n30++
			if len(vals) != 30 || vals[1].Value != "18446744073709551615" || vals[29].Member != "counter_29" {
				t.Errorf("class 2 values %+v", vals)
			}
		}
	}
	if n30 == 0 {
		t.Error("no 30-value metric event")
	}
	first := evs[0]
	ref, vals, err := first.Metric()
	want := []MetricValue{{"PAPI_TOT_CYC", "UINT64", "1000"}, {"PAPI_TOT_INS", "UINT64", "700"}}
	if err != nil || ref != 0 || !reflect.DeepEqual(vals, want) {
		t.Errorf("first metric %d %+v %v", ref, vals, err)
	}
}

// TestParseSingleMetric parses the singular form otf2-print uses for a
// metric class of one member.
func TestParseSingleMetric(t *testing.T) {
	e := Event{Name: "METRIC", Attributes: `Metric: 1, 1 Value: ("instructions" <1>; UINT64; 7)`}
	ref, vals, err := e.Metric()
	want := []MetricValue{{"instructions", "UINT64", "7"}}
	if err != nil || ref != 1 || !reflect.DeepEqual(vals, want) {
		t.Errorf("Metric() = %d, %+v, %v; want 1, %+v", ref, vals, err, want)
	}
	e.Attributes = `Metric: 1, 2 Value: ("instructions" <1>; UINT64; 7)`
	if _, _, err := e.Metric(); err == nil {
		t.Error("2 announced, 1 found: no error")
	}
}

const continuation = `
=== OTF2-PRINT ===
=== Events =====================================================================
Event                                   Location            Timestamp  Attributes
--------------------------------------------------------------------------------
ENTER                                          0                  100  Region: "mapped, with \"comma\"" <5>
                                                                       ADDITIONAL ATTRIBUTES: ("bytes" <0>; UINT64; 300)
LEAVE                                          7        1000000003884  Region: "compute" <2>
`

func TestParseContinuation(t *testing.T) {
	evs, err := Parse(strings.NewReader(continuation))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || len(evs[0].More) != 1 || !strings.HasPrefix(evs[0].More[0], "ADDITIONAL ATTRIBUTES:") {
		t.Fatalf("events %+v", evs)
	}
	if evs[1].Location != 7 || evs[1].Time != 1000000003884 {
		t.Errorf("second event %+v", evs[1])
	}
	var buf bytes.Buffer
	for _, e := range evs {
		if err := Format(&buf, e); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(continuation, buf.String()) {
		t.Errorf("Format does not reproduce the listing:\n%s", buf.String())
	}
}

func TestParseErrors(t *testing.T) {
	head := "x\n-----\n"
	for _, in := range []string{
		head + "   continuation first\n",
		head + "ENTER x 5 Region\n",
		head + "ENTER 0 -5 Region\n",
		head + "ENTER 0\n",
	} {
		if evs, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", in, evs)
		}
	}
	if evs, err := Parse(strings.NewReader("\n=== OTF2-PRINT ===\n")); err != nil || len(evs) != 0 {
		t.Errorf("--silent output: %v %v", evs, err)
	}
}

// FuzzParse checks that Parse and the attribute parsers never panic and
// that formatting parsed events and parsing them again gives them back.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"mpi.txt", "metrics.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(continuation))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		buf.WriteString("-----\n")
		for _, e := range evs {
			_, _, _ = e.Region()
			_, _, _ = e.Metric()
			_ = e.Fields()
			if err := Format(&buf, e); err != nil {
				t.Fatal(err)
			}
		}
		again, err := Parse(&buf)
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, buf.String())
		}
		if len(again) != len(evs) {
			t.Fatalf("reparse: %d events, want %d", len(again), len(evs))
		}
		for i := range evs {
			a, b := evs[i], again[i]
			if a.Name != b.Name || a.Location != b.Location || a.Time != b.Time || strings.TrimSpace(a.Attributes) != strings.TrimSpace(b.Attributes) {
				t.Fatalf("event %d: %+v became %+v", i, a, b)
			}
		}
	})
}

func TestCheckGolden(t *testing.T) {
	tracetest.RequireTool(t, "otf2-print", DebianPackage)
	golden := filepath.Join("..", "..", "testdata", "golden", "single")
	anchor := filepath.Join(golden, "traces.otf2")
	if err := Check(anchor); err != nil {
		t.Fatal(err)
	}
	evs, err := Events(anchor)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 12 {
		t.Errorf("%d events, want 12", len(evs))
	}
	// An anchor whose global definition count is off by one must fail.
	dir := t.TempDir()
	copyTree(t, golden, dir)
	bad := filepath.Join(dir, "traces.otf2")
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	b[0x26]++
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Check(bad); err == nil {
		t.Error("Check accepted an anchor with a wrong definition count")
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
