package convert

import (
	"strings"

	"github.com/hmbtrace/hmbtrace/export/otf2"
)

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
