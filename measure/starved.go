package measure

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/buffer"
)

// starvedWarning returns the warning Close gives when the buffer ran dry
// for want of bins rather than of bytes (buffer.Dry.Starved), though its
// events would have fit: each
// location takes a bin per calling depth and class it records at, so many
// threads or goroutines' lanes of a deep code can hold every bin while
// the events would fit many times over. It says what was removed and the
// setting that keeps it, for the levels the run had at its end; "" when the buffer did not starve.
func starvedWarning(d buffer.Dry, levels, binSize, bufferSize int, st *Stats) string {
	if !d.Starved() {
		return ""
	}
	var removed uint64
	for _, n := range st.Removed {
		removed += n
	}
	// Only when the events would have fit: all of them, at the bytes per
	// event of those kept, in three quarters of the buffer. Otherwise
	// the buffer was too small for them anyway, and the reductions were
	// its ordinary work.
	if st.Kept == 0 || float64(st.Recorded)*float64(st.BytesUsed)/float64(st.Kept) > 0.75*float64(bufferSize) {
		return ""
	}
	share := 0.0
	if st.Recorded > 0 {
		share = 100 * float64(removed) / float64(st.Recorded)
	}
	return fmt.Sprintf("hmbtrace: warning: the buffer ran out of bins, not of memory: when it first ran dry, %d of its %d bins of %s were the partly filled current bins of levels (a level is one location's calling depth and event class; the run had %d at its end), and %d events (%.1f %%) were removed; %s",
		d.Current, d.Bins, formatSize(binSize), levels, removed, share, starvedRemedy(levels, binSize, bufferSize))
}

// starvedRemedy names the setting that gives each level four bins:
// smaller bins, down to buffer.MinBinSize, else a larger buffer.
func starvedRemedy(levels, binSize, bufferSize int) string {
	want := 4 * levels
	b := binSize
	for b/2 >= buffer.MinBinSize && bufferSize/b < want {
		b /= 2
	}
	if b < binSize && bufferSize/b >= want {
		return fmt.Sprintf("HMB_BIN_SIZE=%s keeps them (%d bins)", formatSize(b), bufferSize/b)
	}
	size := (want*b + 1<<20 - 1) &^ (1<<20 - 1) // a whole number of MiB
	return fmt.Sprintf("HMB_BIN_SIZE=%s with HMB_BUFFER_SIZE=%s keeps them", formatSize(b), formatSize(size))
}
