package convert

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/internal/parallel"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// ompWalk is what one location's events give the plan: its parallel
// regions and implicit tasks (by ordinal on the location, loc not set) and
// the explicit tasks it created, in the order of its events.
type ompWalk struct {
	pars, tasks []interval
	creates     []taskCreate
}

type taskCreate struct {
	task uint64
	ord  int // the implicit task it was created in, -1: none
}

// ompLocation reads the events of location k of file i for the plan.
func (x *exporter) ompLocation(i int, f *tracefile.File, k int, kind func(uint32) ompKind) (ompWalk, error) {
	var w ompWalk
	type openKind struct {
		kind ompKind
		idx  int
	}
	var open []openKind
	var last uint64
	var e tracefile.Event
	it := f.Events(f.Locations[k].ID)
	for it.Next(&e) {
		ts := x.tl.at(i, f, e.Time)
		last = ts
		switch e.Kind {
		case encode.KindEnter:
			o := openKind{kind: kind(e.Region), idx: -1}
			switch o.kind {
			case ompParallel:
				parent := -1
				for n := len(open) - 1; n >= 0; n-- {
					if open[n].kind == ompParallel {
						parent = open[n].idx
						break
					}
				}
				o.idx = len(w.pars)
				w.pars = append(w.pars, interval{loc: k, ord: o.idx, begin: ts, end: math.MaxUint64, parent: parent})
			case ompImplicitTask:
				o.idx = len(w.tasks)
				w.tasks = append(w.tasks, interval{ord: o.idx, begin: ts, end: math.MaxUint64})
			}
			open = append(open, o)
		case encode.KindTaskCreate:
			ord := -1
			for n := len(open) - 1; n >= 0; n-- {
				if open[n].kind == ompImplicitTask {
					ord = w.tasks[open[n].idx].ord
					break
				}
			}
			w.creates = append(w.creates, taskCreate{e.Task, ord})
		case encode.KindLeave:
			if len(open) == 0 {
				continue
			}
			o := open[len(open)-1]
			open = open[:len(open)-1]
			switch o.kind {
			case ompParallel:
				w.pars[o.idx].end = ts
			case ompImplicitTask:
				w.tasks[o.idx].end = ts
			}
		}
	}
	if err := it.Err(); err != nil {
		return w, fmt.Errorf("%s: %w", f.Path, err)
	}
	// Regions still open end where the export closes them.
	for n := range w.pars {
		if w.pars[n].end == math.MaxUint64 {
			w.pars[n].end = last
		}
	}
	for n := range w.tasks {
		if w.tasks[n].end == math.MaxUint64 {
			w.tasks[n].end = last
		}
	}
	return w, nil
}

// The OpenMP constructs by the name the adapter (cshim/openmp) gives their
// regions: "!$omp <construct>", then the outlined function and the source
// line ("!$omp parallel main._omp_fn.0 @solve.c:42"). The roles are those
// Score-P gives the same constructs (Knüpfer et al.), so that Vampir and
// Scalasca treat them alike. A construct matches a whole word of the name,
// and the first that matches wins: "!$omp critical wait" comes before
// "!$omp critical".
var ompConstructs = []struct {
	name string
	role otf2.RegionRole
}{
	{"!$omp implicit barrier", otf2.RoleImplicitBarrier},
	// OTF2 has no role for an implicit task: Score-P's OMPT adapter writes
	// it as a task.
	{"!$omp implicit task", otf2.RoleTask},
	{"!$omp parallel", otf2.RoleParallel},
	{"!$omp barrier", otf2.RoleBarrier},
	{"!$omp for", otf2.RoleLoop},
	{"!$omp do", otf2.RoleLoop},
	{"!$omp distribute", otf2.RoleLoop},
	{"!$omp taskloop", otf2.RoleLoop},
	{"!$omp sections", otf2.RoleSections},
	{"!$omp section", otf2.RoleSection},
	{"!$omp single", otf2.RoleSingle},
	{"!$omp masked", otf2.RoleMaster},
	{"!$omp master", otf2.RoleMaster},
	{"!$omp workshare", otf2.RoleWorkshare},
	// The wait to enter a critical section nests in its CRITICAL region;
	// OTF2 has no role for the acquisition, and a wait is what THREAD_WAIT
	// is for among its roles.
	{"!$omp critical wait", otf2.RoleThreadWait},
	{"!$omp critical", otf2.RoleCritical},
	{"!$omp atomic", otf2.RoleAtomic},
	{"!$omp ordered", otf2.RoleOrdered},
	{"!$omp flush", otf2.RoleFlush},
	{"!$omp create task", otf2.RoleTaskCreate},
	{"!$omp taskwait", otf2.RoleTaskWait},
	// A taskgroup waits for its tasks at its end, as taskwait does.
	{"!$omp taskgroup", otf2.RoleTaskWait},
	{"!$omp taskyield", otf2.RoleCode},
	{"!$omp task", otf2.RoleTask},
	// The lock routines are calls into the runtime: Score-P's wrappers.
	{"omp_set_lock", otf2.RoleWrapper},
	{"omp_set_nest_lock", otf2.RoleWrapper},
	{"omp_unset_lock", otf2.RoleWrapper},
	{"omp_unset_nest_lock", otf2.RoleWrapper},
	{"omp_test_lock", otf2.RoleWrapper},
	{"omp_test_nest_lock", otf2.RoleWrapper},
}

// ompRole returns the OTF2 role of an OpenMP region by its name: the
// construct's, or CODE for one OTF2 has no role for (scope, reduction) or
// a name not from the adapter.
func ompRole(name string) otf2.RegionRole {
	for _, c := range ompConstructs {
		if rest, ok := strings.CutPrefix(name, c.name); ok && (rest == "" || rest[0] == ' ') {
			return c.role
		}
	}
	return otf2.RoleCode
}

// Thread teams. The adapter records a parallel region as an
// "!$omp parallel" region on the thread that starts it, holding that
// thread's "!$omp implicit task", and each other thread of the team as an
// implicit task on its own location. OTF2 says the same with ThreadFork
// and ThreadJoin around the parallel region on the forking thread and
// ThreadTeamBegin/End around each member's implicit task, naming a
// communicator of the team's locations. The trace does not name a task's
// team, so the export derives it from time: an implicit task belongs to
// the parallel region that encloses it: on its own location the innermost
// one (the forking thread's own implicit task), for a nested team's thread
// the innermost on the thread that forked its team (by the place the file
// defines for it, or in older files by its name: "thread p:n" was forked by
// "thread p"), and else the tightest of the file. A thread's number in its
// team, its rank in the team's communicator, is the last level of its
// place (or n of its name). A task that two regions of the same length enclose is left without
// a team and counted (Stats.TasksWithoutTeam), as is a region whose
// forking thread's own implicit task is missing (shed by the buffer).

// ompKind is what a region is to the team derivation.
type ompKind uint8

const (
	ompOther ompKind = iota
	ompParallel
	ompImplicitTask
)

func ompKindOf(name string, p tracefile.Paradigm) ompKind {
	if p != tracefile.ParadigmOpenMP {
		return ompOther
	}
	switch ompRole(name) {
	case otf2.RoleParallel:
		return ompParallel
	case otf2.RoleTask:
		if strings.HasPrefix(name, "!$omp implicit task") {
			return ompImplicitTask
		}
	}
	return ompOther
}

// ompPlan is what the export writes for the OpenMP teams of one file, per
// location and by the ordinal of the region's enter on the location.
type ompPlan struct {
	kinds []ompKind     // by region id
	forks [][]uint32    // per location, per parallel region: the team's size
	teams [][]teamOfLoc // per location, per implicit task

	tasks   map[uint64]taskOrigin // explicit tasks by id (task.go)
	created []uint32              // per location: tasks created
	unnamed map[uint64]taskRef    // tasks whose creation is not in the trace, named by the export
	extra   []uint32              // per location: such tasks named after it
}

// teamOfLoc is the team of an implicit task and the location's rank in it
// (its thread number).
type teamOfLoc struct {
	comm otf2.CommRef
	rank uint32
	ok   bool
}

// interval is an OpenMP region's time on one location.
type interval struct {
	loc        int
	ord        int // ordinal of its kind on loc
	begin, end uint64
	parent     int     // enclosing parallel interval on the same location, -1 if none
	tasks      []int32 // a parallel region's implicit tasks, by index
}

// planOpenMP derives the thread teams of every file with OpenMP parallel
// regions and defines their communicators. It reads those files' events a
// second time; files without OpenMP are not read.
func (x *exporter) planOpenMP(procs int) error {
	x.omp = make([]*ompPlan, len(x.files))
	type team struct {
		file    int
		members []int // locations of the file, the forking one first
		name    string
	}
	var teams []team
	teamIdx := map[string]int{} // by file and members
	var key []byte
	for i, f := range x.files {
		kinds := make([]ompKind, 0, len(f.Regions)+1)
		hasParallel := false
		for _, r := range f.Regions {
			for int(r.ID) >= len(kinds) {
				kinds = append(kinds, ompOther)
			}
			kinds[r.ID] = ompKindOf(r.Name, r.Paradigm)
			hasParallel = hasParallel || kinds[r.ID] == ompParallel
		}
		if !hasParallel {
			continue
		}
		kind := func(id uint32) ompKind {
			if int(id) < len(kinds) {
				return kinds[id]
			}
			return ompOther
		}
		plan := &ompPlan{kinds: kinds, forks: make([][]uint32, len(f.Locations)), teams: make([][]teamOfLoc, len(f.Locations))}
		x.omp[i] = plan
		pars := make([][]interval, len(f.Locations)) // per location, in enter order
		var tasks []interval
		// Each location's intervals are read on a worker; they are put
		// together in location order, as one pass over them makes them.
		walks := make([]ompWalk, len(f.Locations))
		err := parallel.Do(procs, len(f.Locations), func(k int) error {
			var err error
			walks[k], err = x.ompLocation(i, f, k, kind)
			return err
		})
		if err != nil {
			return err
		}
		for k, w := range walks {
			pars[k] = w.pars
			first := len(tasks)
			for _, t := range w.tasks {
				t.loc = k
				tasks = append(tasks, t)
			}
			plan.teams[k] = make([]teamOfLoc, len(tasks)-first)
			for _, c := range w.creates {
				plan.addTask(c.task, k, c.ord)
			}
			plan.forks[k] = make([]uint32, len(pars[k]))
		}
		// enclosing returns the innermost parallel region of location l
		// that encloses t, -1 if none.
		enclosing := func(l int, t interval) int {
			ps := pars[l]
			// The last parallel region of l that begins at or before the
			// task, then its enclosing ones.
			n, _ := slices.BinarySearchFunc(ps, t.begin, func(p interval, b uint64) int {
				if p.begin <= b {
					return -1
				}
				return 1
			})
			for n--; n >= 0; n = ps[n].parent {
				if ps[n].begin <= t.begin && t.end <= ps[n].end {
					return n
				}
			}
			return -1
		}
		// Only the locations that fork teams can hold a task's region.
		var forking []int
		for l := range pars {
			if len(pars[l]) > 0 {
				forking = append(forking, l)
			}
		}
		forkers := forkersOf(f)
		for ti, t := range tasks {
			best, bestLoc, tie := -1, -1, false
			// The forking thread's own implicit task lies directly in its
			// parallel region; a nested team's thread was forked by the
			// thread its place names. Only the others are told by time.
			var cands []int
			if n := enclosing(t.loc, t); n >= 0 {
				best, bestLoc = n, t.loc
			} else if k := forkers[t.loc]; k >= 0 {
				cands = []int{k}
			}
			if best < 0 && cands == nil {
				cands = forking
			}
			for _, l := range cands {
				n := enclosing(l, t)
				if n < 0 {
					continue
				}
				p := &pars[l][n]
				if best < 0 {
					best, bestLoc = n, l
					continue
				}
				b := &pars[bestLoc][best]
				switch {
				case p.end-p.begin < b.end-b.begin:
					best, bestLoc, tie = n, l, false
				case p.end-p.begin == b.end-b.begin:
					tie = true
				}
			}
			if best < 0 || tie {
				x.st.TasksWithoutTeam++
				continue
			}
			p := &pars[bestLoc][best]
			p.tasks = append(p.tasks, int32(ti))
		}
		for l := range pars {
			for n := range pars[l] {
				p := &pars[l][n]
				size := len(p.tasks)
				plan.forks[l][n] = uint32(max(size, 1))
				// The forking thread must be a member: else the region's
				// tasks are not a team this export can tell.
				if !slices.ContainsFunc(p.tasks, func(t int32) bool { return tasks[t].loc == l }) {
					x.st.TasksWithoutTeam += uint64(len(p.tasks))
					continue
				}
				members := []int{l}
				for _, t := range p.tasks {
					if loc := tasks[t].loc; loc != l && !slices.Contains(members, loc) {
						members = append(members, loc)
					}
				}
				if len(members) != len(p.tasks) {
					// A location twice in one team: not a team.
					x.st.TasksWithoutTeam += uint64(len(p.tasks))
					continue
				}
				slices.SortFunc(members[1:], func(a, b int) int {
					return cmp.Compare(locThreadNumber(&f.Locations[a], a), locThreadNumber(&f.Locations[b], b))
				})
				key = strconv.AppendInt(key[:0], int64(i), 10)
				for _, m := range members {
					key = strconv.AppendInt(append(key, ' '), int64(m), 10)
				}
				ti, ok := teamIdx[string(key)]
				if !ok {
					ti = len(teams)
					teamIdx[string(key)] = ti
					teams = append(teams, team{file: i, members: members, name: teamName(f, members)})
				}
				for _, t := range p.tasks {
					rank := uint32(slices.Index(members, tasks[t].loc))
					plan.teams[tasks[t].loc][tasks[t].ord] = teamOfLoc{comm: otf2.CommRef(ti), rank: rank, ok: true}
				}
			}
		}
	}
	if len(teams) == 0 {
		return nil
	}
	// The OpenMP paradigm's locations, then a communicator per team whose
	// ranks index them.
	index := map[otf2.LocationRef]uint64{}
	var locs []uint64
	for _, t := range teams {
		for _, m := range t.members {
			ref := x.writers[t.file][m].Ref()
			if _, ok := index[ref]; !ok {
				index[ref] = uint64(len(locs))
				locs = append(locs, uint64(ref))
			}
		}
	}
	if _, err := x.a.Group(otf2.GroupDef{Type: otf2.GroupTypeCommLocations, Paradigm: otf2.ParadigmOpenMP, Members: locs}); err != nil {
		return err
	}
	comms := make([]otf2.CommRef, len(teams))
	for n, t := range teams {
		ranks := make([]uint64, len(t.members))
		for k, m := range t.members {
			ranks[k] = index[x.writers[t.file][m].Ref()]
		}
		g, err := x.a.Group(otf2.GroupDef{Type: otf2.GroupTypeCommGroup, Paradigm: otf2.ParadigmOpenMP, Members: ranks})
		if err != nil {
			return err
		}
		if comms[n], err = x.a.Comm(t.name, g, otf2.NoComm); err != nil {
			return err
		}
	}
	x.st.ThreadTeams = len(teams)
	for _, plan := range x.omp {
		if plan == nil {
			continue
		}
		for _, ts := range plan.teams {
			for n := range ts {
				if ts[n].ok {
					ts[n].comm = comms[ts[n].comm]
				}
			}
		}
	}
	return nil
}

// forkersOf returns, per location of f, the location whose thread forked
// the nested team it is a thread of, -1 if none or not known: by the
// places the file defines (tracefile.Location.Team: the forker's is the
// place without the last level), else, in files before those, by the
// names the OpenMP adapter gives ("thread p:n" was forked by "thread p").
func forkersOf(f *tracefile.File) []int {
	out := make([]int, len(f.Locations))
	byName := map[string]int{}
	byPlace := map[string]int{}
	for k := range f.Locations {
		l := &f.Locations[k]
		byName[l.Name] = k
		if len(l.Team) > 0 {
			byPlace[fmt.Sprint(l.Team)] = k
		}
	}
	for k := range f.Locations {
		l := &f.Locations[k]
		out[k] = -1
		if len(l.Team) > 0 {
			if len(l.Team) > 1 {
				if p, ok := byPlace[fmt.Sprint(l.Team[:len(l.Team)-1])]; ok {
					out[k] = p
				}
			}
			continue
		}
		if name := l.Name; strings.HasPrefix(name, "thread ") && strings.Contains(name, ":") {
			if p, ok := byName[name[:strings.LastIndexByte(name, ':')]]; ok {
				out[k] = p
			}
		}
	}
	return out
}

// locThreadNumber is location l's (index loc) number in its team: the last
// level of its place, else by its name (threadNumber).
func locThreadNumber(l *tracefile.Location, loc int) int {
	if len(l.Team) > 0 {
		return l.Team[len(l.Team)-1]
	}
	return threadNumber(l.Name, loc)
}

// threadNumber is the number of thread location name in its team: n of
// "thread n" or "thread p:n"; other names sort after, by location.
func threadNumber(name string, loc int) int {
	s, ok := strings.CutPrefix(name, "thread ")
	if ok {
		if k := strings.LastIndexByte(s, ':'); k >= 0 {
			s = s[k+1:]
		}
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return n
		}
	}
	return math.MaxInt32 + loc
}

// ompEnter writes what comes before the enter of region id on location k
// of file i, o being its open region: ThreadFork before a parallel region,
// ThreadTeamBegin before an implicit task with a team.
func (x *exporter) ompEnter(i, k int, id uint32, o *openRegion, w *otf2.EventWriter, ts uint64) error {
	plan := x.omp[i]
	if plan == nil || int(id) >= len(plan.kinds) {
		return nil
	}
	switch plan.kinds[id] {
	case ompParallel:
		n := x.parallels
		x.parallels++
		if n >= len(plan.forks[k]) {
			return fmt.Errorf("parallel region %d not seen when the teams were derived", n)
		}
		o.fork = true
		return w.ThreadFork(ts, otf2.ParadigmOpenMP, plan.forks[k][n])
	case ompImplicitTask:
		n := x.implicitTasks
		x.implicitTasks++
		if n >= len(plan.teams[k]) {
			return fmt.Errorf("implicit task %d not seen when the teams were derived", n)
		}
		if t := plan.teams[k][n]; t.ok {
			o.team, o.teamRank, o.hasTeam = t.comm, t.rank, true
			x.lastTeam = t
			return w.ThreadTeamBegin(ts, t.comm)
		}
	}
	return nil
}

// teamName names a team by its rank and members, the forking thread first:
// "Rank 0 team thread 0, thread 1"; a large one by its first and last
// member and its size.
func teamName(f *tracefile.File, members []int) string {
	name := func(k int) string { return f.Locations[k].Name }
	if len(members) > 4 {
		return fmt.Sprintf("Rank %d team %s ... %s (%d threads)", f.Header.Rank, name(members[0]), name(members[len(members)-1]), len(members))
	}
	names := make([]string, len(members))
	for n, m := range members {
		names[n] = name(m)
	}
	return fmt.Sprintf("Rank %d team %s", f.Header.Rank, strings.Join(names, ", "))
}
