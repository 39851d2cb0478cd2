//go:build linux && !amd64

package hwcounter

// rdpmcArch says that this architecture reads with read() only: the user-space
// counter instructions (e.g. arm64's PMEVCNTR via perf_user_access) are not
// implemented here, so choosePath never selects the rdpmc path.
const rdpmcArch = false

// readPageCPU reports "not readable from user space", which makes Read fall
// back to read(); choosePath never selects the rdpmc path on this
// architecture, so it is not reached.
func readPageCPU(*mmapPage) (pageSnapshot, bool) { return pageSnapshot{}, false }
