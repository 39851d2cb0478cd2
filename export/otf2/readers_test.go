package otf2

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
)

// The tests in this file read the Go writer's archives with the reference
// readers: otf2-print (Debian otf2-tools) and python3-otf2.

// TestOTF2Print requires otf2-print -Werror to accept every scenario's
// archive with an empty stderr, and to print, per location, exactly the
// events that were written.
func TestOTF2Print(t *testing.T) {
	otf2print.Require(t)
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			if testing.Short() && s.name == "multichunk" {
				t.Skip("300,000 events")
			}
			b, dir := writeScenario(t, s, t.TempDir())
			anchor := filepath.Join(dir, "traces.otf2")
			if err := otf2print.Check(anchor); err != nil {
				t.Fatal(err)
			}
			evs, err := otf2print.Events(anchor)
			if err != nil {
				t.Fatal(err)
			}
			printed := otf2print.ByLocation(evs)
			for loc, want := range b.events {
				got := printed[uint64(loc)]
				if len(got) != len(want) {
					t.Errorf("location %d: otf2-print shows %d events, %d were written", loc, len(got), len(want))
					continue
				}
				shifted := b.hasClockOffsets(loc)
				for i := range want {
					w := want[i]
					if shifted {
						// Readers map local to global time with the clock
						// offsets; the order must survive.
						w.time = got[i].Time
						if i > 0 && got[i].Time < got[i-1].Time {
							t.Errorf("location %d event %d: time %d before %d", loc, i, got[i].Time, got[i-1].Time)
						}
					}
					if err := matchPrinted(got[i], w); err != nil {
						t.Errorf("location %d event %d: %v", loc, i, err)
						break
					}
				}
			}
			for loc := range printed {
				if _, ok := b.events[LocationRef(loc)]; !ok {
					t.Errorf("otf2-print shows events for location %d, which has none", loc)
				}
			}
		})
	}
}

// matchPrinted compares one otf2-print event with what was written.
func matchPrinted(got otf2print.Event, want recordedEvent) error {
	if got.Name != want.kind || got.Time != want.time {
		return fmt.Errorf("got %s at %d, want %s at %d", got.Name, got.Time, want.kind, want.time)
	}
	switch want.kind {
	case "ENTER", "LEAVE":
		_, ref, err := got.Region()
		if err != nil {
			return err
		}
		if ref != want.ref {
			return fmt.Errorf("%s at %d: region %d, want %d", got.Name, got.Time, ref, want.ref)
		}
	case "METRIC":
		ref, vals, err := got.Metric()
		if err != nil {
			return err
		}
		if ref != want.ref || len(vals) != len(want.values) {
			return fmt.Errorf("metric %d with %d values, want %d with %d", ref, len(vals), want.ref, len(want.values))
		}
		for i, v := range vals {
			if err := matchMetricValue(v, want.values[i]); err != nil {
				return fmt.Errorf("metric %d value %d: %v", ref, i, err)
			}
		}
	case "MPI_SEND", "MPI_RECV":
		peerKey := "Receiver"
		if want.kind == "MPI_RECV" {
			peerKey = "Sender"
		}
		peer, _, _ := strings.Cut(field(got, peerKey), " ")
		_, comm, err := parseQuotedRef(field(got, "Communicator"))
		if err != nil {
			return err
		}
		gotVals := fmt.Sprintf("%s %d %s %s", peer, comm, field(got, "Tag"), field(got, "Length"))
		wantVals := fmt.Sprintf("%d %d %d %d", want.values[0], want.ref, want.values[1], want.values[2])
		if gotVals != wantVals {
			return fmt.Errorf("%s: peer comm tag length = %s, want %s", got.Name, gotVals, wantVals)
		}
	default:
		return matchFields(got, want)
	}
	return nil
}

// matchFields compares the attributes otf2-print shows with those a
// scenario wrote: a reference's number, a peer's or root's rank, and
// UNDEFINED (otf2-print's NONE) for an undefined root.
func matchFields(got otf2print.Event, want recordedEvent) error {
	fs := got.Fields()
	if len(fs) != len(want.fields) {
		return fmt.Errorf("%s at %d: %d attributes %v, want %d %v", got.Name, got.Time, len(fs), fs, len(want.fields), want.fields)
	}
	for _, f := range fs {
		v := f.Value
		if _, ref, err := parseQuotedRef(v); err == nil && strings.HasPrefix(v, `"`) {
			v = strconv.FormatUint(ref, 10)
		} else if rank, _, ok := strings.Cut(v, " ("); ok {
			v = rank
		} else if v == "NONE" {
			v = "UNDEFINED"
		}
		if w, ok := want.fields[f.Key]; !ok || w != v {
			return fmt.Errorf("%s at %d: %s is %q, want %q", got.Name, got.Time, f.Key, v, w)
		}
	}
	return nil
}

func field(e otf2print.Event, key string) string {
	v, _ := e.Field(key)
	return v
}

// parseQuotedRef parses `"name" <ref>`.
func parseQuotedRef(v string) (string, uint64, error) {
	i := strings.LastIndex(v, " <")
	if i < 0 || !strings.HasSuffix(v, ">") {
		return "", 0, fmt.Errorf("want \"name\" <ref>, got %q", v)
	}
	ref, err := strconv.ParseUint(v[i+2:len(v)-1], 10, 64)
	return strings.Trim(v[:i], `"`), ref, err
}

func matchMetricValue(v otf2print.MetricValue, bits uint64) error {
	var want string
	switch v.Type {
	case "UINT64":
		want = strconv.FormatUint(bits, 10)
	case "INT64":
		want = strconv.FormatInt(int64(bits), 10)
	case "DOUBLE":
		f, err := strconv.ParseFloat(v.Value, 64)
		if err != nil {
			return err
		}
		if w := math.Float64frombits(bits); math.Abs(f-w) > 1e-9*math.Abs(w) {
			return fmt.Errorf("DOUBLE %s, want %v", v.Value, w)
		}
		return nil
	default:
		return fmt.Errorf("unexpected type %s", v.Type)
	}
	if v.Value != want {
		return fmt.Errorf("%s %s, want %s", v.Type, v.Value, want)
	}
	return nil
}

// requirePythonOTF2 returns Debian's python3 if it can import otf2.
func requirePythonOTF2(t *testing.T) string {
	t.Helper()
	const python = "/usr/bin/python3" // python3-otf2 is built for Debian's python only
	err := exec.Command(python, "-c", "import otf2").Run()
	if err != nil {
		tracetest.SkipOrFail(t, fmt.Sprintf("%s cannot import otf2 (%v): install the Debian package python3-otf2", python, err))
	}
	return python
}

type pythonLocation struct {
	Name           string         `json:"name"`
	Group          string         `json:"group"`
	NumberOfEvents uint64         `json:"number_of_events"`
	Events         int            `json:"events"`
	Kinds          map[string]int `json:"kinds"`
	Monotonic      bool           `json:"monotonic"`
	First, Last    *uint64
}

type pythonResult struct {
	TimerResolution uint64                    `json:"timer_resolution"`
	Regions         []string                  `json:"regions"`
	Locations       map[string]pythonLocation `json:"locations"`
}

// pythonKinds maps otf2-print event names to python3-otf2 event classes.
var pythonKinds = map[string]string{"ENTER": "Enter", "LEAVE": "Leave", "METRIC": "Metric", "MPI_SEND": "MpiSend", "MPI_RECV": "MpiRecv",
	"MPI_ISEND": "MpiIsend", "MPI_ISEND_COMPLETE": "MpiIsendComplete", "MPI_IRECV_REQUEST": "MpiIrecvRequest",
	"MPI_IRECV": "MpiIrecv", "MPI_REQUEST_TEST": "MpiRequestTest", "MPI_REQUEST_CANCELLED": "MpiRequestCancelled",
	"MPI_COLLECTIVE_BEGIN": "MpiCollectiveBegin", "MPI_COLLECTIVE_END": "MpiCollectiveEnd",
	"NON_BLOCKING_COLLECTIVE_REQUEST": "NonBlockingCollectiveRequest", "NON_BLOCKING_COLLECTIVE_COMPLETE": "NonBlockingCollectiveComplete",
	"THREAD_FORK": "ThreadFork", "THREAD_JOIN": "ThreadJoin", "THREAD_TEAM_BEGIN": "ThreadTeamBegin", "THREAD_TEAM_END": "ThreadTeamEnd",
	"THREAD_TASK_CREATE": "ThreadTaskCreate", "THREAD_TASK_SWITCH": "ThreadTaskSwitch", "THREAD_TASK_COMPLETE": "ThreadTaskComplete"}

// TestPythonReader reads every scenario's archive with python3-otf2 and
// checks the location definitions, the number and kinds of events per
// location and that their times never decrease.
func TestPythonReader(t *testing.T) {
	python := requirePythonOTF2(t)
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			if testing.Short() && s.name == "multichunk" {
				t.Skip("300,000 events")
			}
			if s.notForPython != "" {
				t.Skip(s.notForPython)
			}
			b, dir := writeScenario(t, s, t.TempDir())
			out, err := exec.Command(python, filepath.Join("testdata", "read_otf2.py"), filepath.Join(dir, "traces.otf2")).CombinedOutput()
			if err != nil {
				t.Fatalf("python3-otf2: %v\n%s", err, out)
			}
			var res pythonResult
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if len(res.Regions) != len(b.a.regions) {
				t.Errorf("python3-otf2 sees %d regions, %d were defined", len(res.Regions), len(b.a.regions))
			}
			if len(res.Locations) != len(b.a.locations) {
				t.Errorf("python3-otf2 sees %d locations, %d were defined", len(res.Locations), len(b.a.locations))
			}
			for i, l := range b.a.locations {
				p, ok := res.Locations[strconv.Itoa(i)]
				if !ok {
					t.Errorf("location %d missing", i)
					continue
				}
				want := b.events[LocationRef(i)]
				kinds := map[string]int{}
				for _, e := range want {
					kinds[pythonKinds[e.kind]]++
				}
				if p.Name != l.label || p.NumberOfEvents != uint64(len(want)) || p.Events != len(want) || !p.Monotonic {
					t.Errorf("location %d: python3-otf2 reads %+v; wrote %q with %d events", i, p, l.label, len(want))
				}
				if fmt.Sprint(p.Kinds) != fmt.Sprint(kinds) {
					t.Errorf("location %d: event kinds %v, want %v", i, p.Kinds, kinds)
				}
				if len(want) > 0 && !b.hasClockOffsets(LocationRef(i)) && (p.First == nil || *p.First != want[0].time || *p.Last != want[len(want)-1].time) {
					t.Errorf("location %d: time range %v..%v, want %d..%d", i, p.First, p.Last, want[0].time, want[len(want)-1].time)
				}
			}
		})
	}
}
