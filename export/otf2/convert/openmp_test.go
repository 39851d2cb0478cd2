package convert

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ompTrace builds a trace as the OpenMP adapter records it: a parallel
// region on thread 0 holding its implicit task, thread 1's implicit task
// inside that time, a loop, a critical section with its wait, a lock, a
// task created and run, a taskwait and the implicit barrier.
func ompTrace(t *testing.T) *tracefile.File {
	names := []string{
		"main",                                  // 1
		"!$omp parallel main._omp_fn.0 @a.c:10", // 2
		"!$omp implicit task main._omp_fn.0",    // 3
		"!$omp for @a.c:12",                     // 4
		"!$omp implicit barrier @a.c:12",        // 5
		"!$omp critical @a.c:20",                // 6
		"!$omp critical wait @a.c:20",           // 7
		"omp_set_lock",                          // 8
		"!$omp create task @a.c:30",             // 9
		"!$omp task @a.c:30",                    // 10
		"!$omp taskwait @a.c:31",                // 11
		"!$omp barrier @a.c:32",                 // 12
		"!$omp single @a.c:33",                  // 13
		"!$omp taskgroup @a.c:34",               // 14
		"!$omp scope @a.c:35",                   // 15
	}
	b := tracetest.NewBuilder("omp", "node", 0, time.Unix(100, 0), names...)
	for i := range b.Trace.Regions {
		if i > 0 {
			b.Trace.Regions[i].Paradigm = tracefile.ParadigmOpenMP
		}
	}
	t0, t1 := b.Location("thread 0"), b.Location("thread 1")
	t0.Enter(10, 1)
	t0.Enter(20, 2)
	t0.Enter(21, 3)
	t1.Enter(22, 3)
	for _, l := range []*tracetest.Location{t0, t1} {
		l.Enter(30, 4)
		l.Leave(40)
		l.Enter(41, 5)
		l.Leave(50)
	}
	t0.Enter(51, 6)
	t0.Enter(52, 7)
	t0.Leave(53)
	t0.Leave(54)
	t1.Enter(51, 6)
	t1.Enter(52, 7)
	t1.Leave(55)
	t1.Leave(56)
	t1.Enter(57, 8)
	t1.Leave(58)
	t0.Enter(60, 9)
	t0.Leave(61)
	t1.Enter(62, 10)
	t1.Leave(63)
	t0.Enter(64, 11)
	t0.Leave(65)
	for _, l := range []*tracetest.Location{t0, t1} {
		l.Enter(66, 12)
		l.Leave(67)
		l.Enter(68, 13)
		l.Leave(69)
		l.Enter(70, 14)
		l.Leave(71)
		l.Enter(72, 15)
		l.Leave(73)
	}
	t1.Leave(80)
	t0.Leave(81)
	t0.Leave(90)
	t0.Leave(100)
	return b.Write(t, t.TempDir())
}

// TestOpenMPRoles exports the OpenMP regions with the OpenMP paradigm and
// the role of their construct; otf2-print -Werror and python3-otf2 read
// the archive back.
func TestOpenMPRoles(t *testing.T) {
	files := []*tracefile.File{ompTrace(t)}
	anchor, _ := export(t, files, otf2.Options{})
	checkArchive(t, anchor, files)
	defs := definitions(t, anchor)
	for _, want := range []string{
		`Name: "main" <\d+> .*Role: FUNCTION, Paradigm: USER`,
		`Name: "!\$omp parallel main._omp_fn.0 @a.c:10" <\d+> .*Role: PARALLEL, Paradigm: OPENMP`,
		`Name: "!\$omp implicit task main._omp_fn.0" <\d+> .*Role: TASK, Paradigm: OPENMP`,
		`Name: "!\$omp for @a.c:12" <\d+> .*Role: LOOP, Paradigm: OPENMP`,
		`Name: "!\$omp implicit barrier @a.c:12" <\d+> .*Role: IMPLICIT_BARRIER, Paradigm: OPENMP`,
		`Name: "!\$omp critical @a.c:20" <\d+> .*Role: CRITICAL, Paradigm: OPENMP`,
		`Name: "!\$omp critical wait @a.c:20" <\d+> .*Role: THREAD_WAIT, Paradigm: OPENMP`,
		`Name: "omp_set_lock" <\d+> .*Role: WRAPPER, Paradigm: OPENMP`,
		`Name: "!\$omp create task @a.c:30" <\d+> .*Role: TASK_CREATE, Paradigm: OPENMP`,
		`Name: "!\$omp task @a.c:30" <\d+> .*Role: TASK, Paradigm: OPENMP`,
		`Name: "!\$omp taskwait @a.c:31" <\d+> .*Role: TASK_WAIT, Paradigm: OPENMP`,
		`Name: "!\$omp barrier @a.c:32" <\d+> .*Role: BARRIER, Paradigm: OPENMP`,
		`Name: "!\$omp single @a.c:33" <\d+> .*Role: SINGLE, Paradigm: OPENMP`,
		`Name: "!\$omp taskgroup @a.c:34" <\d+> .*Role: TASK_WAIT, Paradigm: OPENMP`,
		`Name: "!\$omp scope @a.c:35" <\d+> .*Role: CODE, Paradigm: OPENMP`,
	} {
		if !regexp.MustCompile(want).MatchString(defs) {
			t.Errorf("definitions lack %s:\n%s", want, defs)
		}
	}
}

func TestOMPRoleWords(t *testing.T) {
	for name, want := range map[string]otf2.RegionRole{
		"!$omp task":              otf2.RoleTask,
		"!$omp taskwait":          otf2.RoleTaskWait,
		"!$omp taskloop @b.f90:3": otf2.RoleLoop,
		"!$omp section":           otf2.RoleSection,
		"!$omp sections @x.c:1":   otf2.RoleSections,
		"!$omp critical":          otf2.RoleCritical,
		"!$omp critical wait":     otf2.RoleThreadWait,
		"!$omp parallelism":       otf2.RoleCode,
		"user_region":             otf2.RoleCode,
	} {
		if got := ompRole(name); got != want {
			t.Errorf("ompRole(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestOpenMPThreadTeam checks the thread events of a parallel region:
// ThreadFork and ThreadJoin around it on the thread that starts it, and
// ThreadTeamBegin/End around each member's implicit task, on a team
// communicator of both threads.
func TestOpenMPThreadTeam(t *testing.T) {
	files := []*tracefile.File{ompTrace(t)}
	anchor, st := export(t, files, otf2.Options{})
	checkArchive(t, anchor, files)
	_, threads := checkArchiveThreads(t, anchor, files)
	want := map[uint64][]string{
		0: {"THREAD_FORK 20 OPENMP 2", `THREAD_TEAM_BEGIN 21 "Rank 0 team thread 0, thread 1"`, `THREAD_TEAM_END 81 "Rank 0 team thread 0, thread 1"`, "THREAD_JOIN 90 OPENMP"},
		1: {`THREAD_TEAM_BEGIN 22 "Rank 0 team thread 0, thread 1"`, `THREAD_TEAM_END 80 "Rank 0 team thread 0, thread 1"`},
	}
	if !reflect.DeepEqual(threads, want) {
		t.Errorf("thread events\n got %q\nwant %q", threads, want)
	}
	if st.ThreadTeams != 1 || st.TasksWithoutTeam != 0 {
		t.Errorf("stats %+v: want 1 team, no task without one", st)
	}
	defs := definitions(t, anchor)
	for _, want := range []string{
		`GROUP .* Type: COMM_LOCATIONS, Paradigm: OPENMP, .*2 Members: "thread 0" <0>, "thread 1" <1>`,
		`GROUP .* Type: COMM_GROUP, Paradigm: OPENMP, .*2 Members: 0 \("thread 0" <0>\), 1 \("thread 1" <1>\)`,
		`COMM .* Name: "Rank 0 team thread 0, thread 1"`,
	} {
		if !regexp.MustCompile(want).MatchString(defs) {
			t.Errorf("definitions lack %s:\n%s", want, defs)
		}
	}
}

// TestOpenMPNestedTeams checks nested parallel regions: threads 0 and 1
// of the outer team each fork an inner team, with threads 0:1 and 1:1.
// Thread 1:1's implicit task lies in both inner regions' times, thread 0's
// the tighter: its name says it is thread 1's. An implicit task outside
// any parallel region gets no team and is counted.
func TestOpenMPNestedTeams(t *testing.T) {
	testOpenMPNestedTeams(t, []string{"thread 0", "thread 1", "thread 1:1", "thread 9", "thread 0:1"}, nil)
}

// TestOpenMPTeamsByPlace is TestOpenMPNestedTeams with locations named
// otherwise (hmb_thread_name) but with their OpenMP places defined: the
// places, not the names, tell the teams and the ranks in them.
func TestOpenMPTeamsByPlace(t *testing.T) {
	testOpenMPNestedTeams(t, []string{"main", "helper", "helper's", "stray", "main's"},
		[][]int{{0}, {1}, {1, 1}, nil, {0, 1}})
}

func testOpenMPNestedTeams(t *testing.T, names []string, places [][]int) {
	b := tracetest.NewBuilder("omp", "node", 3, time.Unix(100, 0), "main",
		"!$omp parallel outer @a.c:10", "!$omp implicit task outer",
		"!$omp parallel inner @a.c:20", "!$omp implicit task inner")
	for i := 1; i < len(b.Trace.Regions); i++ {
		b.Trace.Regions[i].Paradigm = tracefile.ParadigmOpenMP
	}
	t0, t1, t11, stray, t01 := b.Location(names[0]), b.Location(names[1]), b.Location(names[2]), b.Location(names[3]), b.Location(names[4])
	for i, p := range places {
		b.Trace.Locations[i].Team = p
	}
	t0.Enter(0, 1)
	t0.Enter(10, 2)
	t0.Enter(11, 3)
	t1.Enter(12, 3)
	t1.Enter(20, 4)
	t1.Enter(21, 5)
	t0.Enter(30, 4)
	t0.Enter(31, 5)
	t01.Enter(32, 5)
	t11.Enter(33, 5)
	t11.Leave(47)
	t01.Leave(48)
	t0.Leave(49)
	t0.Leave(50)
	t1.Leave(59)
	t1.Leave(60)
	t1.Leave(88)
	t0.Leave(89)
	t0.Leave(90)
	stray.Enter(95, 3)
	stray.Leave(99)
	t0.Leave(100)
	files := []*tracefile.File{b.Write(t, t.TempDir())}
	anchor, st := export(t, files, otf2.Options{})
	checkArchive(t, anchor, files)
	_, threads := checkArchiveThreads(t, anchor, files)
	outer := fmt.Sprintf(`"Rank 3 team %s, %s"`, names[0], names[1])
	inner0 := fmt.Sprintf(`"Rank 3 team %s, %s"`, names[0], names[4])
	inner1 := fmt.Sprintf(`"Rank 3 team %s, %s"`, names[1], names[2])
	want := map[uint64][]string{
		0: {"THREAD_FORK 10 OPENMP 2", "THREAD_TEAM_BEGIN 11 " + outer,
			"THREAD_FORK 30 OPENMP 2", "THREAD_TEAM_BEGIN 31 " + inner0, "THREAD_TEAM_END 49 " + inner0, "THREAD_JOIN 50 OPENMP",
			"THREAD_TEAM_END 89 " + outer, "THREAD_JOIN 90 OPENMP"},
		1: {"THREAD_TEAM_BEGIN 12 " + outer, "THREAD_FORK 20 OPENMP 2", "THREAD_TEAM_BEGIN 21 " + inner1,
			"THREAD_TEAM_END 59 " + inner1, "THREAD_JOIN 60 OPENMP", "THREAD_TEAM_END 88 " + outer},
		2: {"THREAD_TEAM_BEGIN 33 " + inner1, "THREAD_TEAM_END 47 " + inner1},
		4: {"THREAD_TEAM_BEGIN 32 " + inner0, "THREAD_TEAM_END 48 " + inner0},
	}
	if !reflect.DeepEqual(threads, want) {
		t.Errorf("thread events\n got %q\nwant %q", threads, want)
	}
	if st.ThreadTeams != 3 || st.TasksWithoutTeam != 1 {
		t.Errorf("stats %+v: want 3 teams, 1 task without one", st)
	}
	defs := definitions(t, anchor)
	q := func(i int) string { return regexp.QuoteMeta(names[i]) }
	for _, want := range []string{
		fmt.Sprintf(`GROUP .* Type: COMM_LOCATIONS, Paradigm: OPENMP, .*4 Members: "%s" <0>, "%s" <1>, "%s" <4>, "%s" <2>`, q(0), q(1), q(4), q(2)),
		fmt.Sprintf(`GROUP .* Type: COMM_GROUP, Paradigm: OPENMP, .*2 Members: 1 \("%s" <1>\), 3 \("%s" <2>\)`, q(1), q(2)),
	} {
		if !regexp.MustCompile(want).MatchString(defs) {
			t.Errorf("definitions lack %s:\n%s", want, defs)
		}
	}
}

func TestThreadNumber(t *testing.T) {
	for name, want := range map[string]int{"thread 3": 3, "thread 1:2": 2, "thread 0:1:4": 4, "main": math.MaxInt32 + 7, "thread x": math.MaxInt32 + 7} {
		if got := threadNumber(name, 7); got != want {
			t.Errorf("threadNumber(%q) = %d, want %d", name, got, want)
		}
	}
}

// BenchmarkExportOpenMP exports 8 threads × 2000 parallel regions (an
// implicit task and a barrier in each), with the regions of the OpenMP
// paradigm (teams derived: the events read twice) and of the user
// paradigm (no teams), to show what deriving the teams costs per event.
func BenchmarkExportOpenMP(b *testing.B) {
	for _, par := range []tracefile.Paradigm{tracefile.ParadigmOpenMP, tracefile.ParadigmUser} {
		b.Run(map[tracefile.Paradigm]string{tracefile.ParadigmOpenMP: "openmp", tracefile.ParadigmUser: "user"}[par], func(b *testing.B) {
			bl := tracetest.NewBuilder("omp", "node", 0, time.Unix(100, 0), "main",
				"!$omp parallel f @a.c:1", "!$omp implicit task f", "!$omp barrier @a.c:2")
			for i := 1; i < len(bl.Trace.Regions); i++ {
				bl.Trace.Regions[i].Paradigm = par
			}
			const threads, regions = 8, 2000
			var locs []*tracetest.Location
			for k := range threads {
				locs = append(locs, bl.Location("thread "+strconv.Itoa(k)))
			}
			locs[0].Enter(0, 1)
			for r := range regions {
				t := uint64(10 + r*100)
				locs[0].Enter(t, 2)
				for k, l := range locs {
					l.Enter(t+1+uint64(k), 3)
					l.Enter(t+50, 4)
					l.Leave(t + 60)
					l.Leave(t + 90 - uint64(k))
				}
				locs[0].Leave(t + 95)
			}
			locs[0].Leave(uint64(10 + regions*100))
			files := []*tracefile.File{bl.Write(b, b.TempDir())}
			b.ResetTimer()
			var st Stats
			for b.Loop() {
				dir := filepath.Join(b.TempDir(), "a")
				var err error
				if st, err = Export(dir, files, otf2.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(st.Events), "ns/event")
		})
	}
}
