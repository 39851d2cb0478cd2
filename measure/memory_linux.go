package measure

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hmbtrace/hmbtrace/internal/units"
	"golang.org/x/sys/unix"
)

// checkBufferSize tells before the buffer is allocated whether it can be:
// the Go runtime ends the process with a fatal error, not an error value,
// when the operating system refuses the memory, so a size the machine
// cannot give must be caught first. It checks the size against the
// machine's memory, the cgroup's limit and the address-space limit, then
// asks the kernel for the memory itself (mmap), which says no under the
// same rules as it will to the runtime.
func checkBufferSize(size int) error {
	limit, what := memoryLimit()
	if limit > 0 && uint64(size) > limit {
		return fmt.Errorf("hmbtrace: HMB_BUFFER_SIZE=%s: the buffer of %s is larger than %s (%s)",
			formatSize(size), units.Size(float64(size)), what, units.Size(float64(limit)))
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return fmt.Errorf("hmbtrace: HMB_BUFFER_SIZE=%s: the buffer of %s cannot be allocated: %v",
			formatSize(size), units.Size(float64(size)), err)
	}
	unix.Munmap(mem)
	return nil
}

// memoryLimit returns the smallest bound on what the process may allocate
// and what it is, or 0 if none is known.
func memoryLimit() (uint64, string) {
	var limit uint64
	var what string
	lower := func(n uint64, w string) {
		if n > 0 && (limit == 0 || n < limit) {
			limit, what = n, w
		}
	}
	if n, ok := memTotal(); ok {
		lower(n, "the machine's memory")
	}
	if n, ok := cgroupLimit(); ok {
		lower(n, "the cgroup's memory limit")
	}
	for _, r := range []struct {
		res  int
		name string
	}{{unix.RLIMIT_AS, "the address-space limit (ulimit -v)"}, {unix.RLIMIT_DATA, "the data-segment limit (ulimit -d)"}} {
		var rl unix.Rlimit
		if unix.Getrlimit(r.res, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
			lower(rl.Cur, r.name)
		}
	}
	return limit, what
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		return kb << 10, err == nil
	}
	return 0, false
}

// cgroupLimit reads the memory limit of the process's cgroup (v2, then v1).
func cgroupLimit() (uint64, bool) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	var paths []string
	for _, line := range bytes.Split(self, []byte("\n")) {
		parts := strings.SplitN(string(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			paths = append(paths, "/sys/fs/cgroup"+parts[2]+"/memory.max", "/sys/fs/cgroup/memory.max")
		case strings.Contains(parts[1], "memory"):
			paths = append(paths, "/sys/fs/cgroup/memory"+parts[2]+"/memory.limit_in_bytes",
				"/sys/fs/cgroup/memory/memory.limit_in_bytes")
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		// "max" (v2) and a huge number (v1) both mean no limit.
		if err == nil && n < 1<<62 {
			return n, true
		}
	}
	return 0, false
}
