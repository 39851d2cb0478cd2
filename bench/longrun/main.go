// Longrun drives a long run of events from several goroutines through a
// realistic call tree into a small fixed buffer and prints how much a
// basic-record trace of it would take, the buffer, their ratio, the peak
// RSS, the probe cost before the first reduction and after the last, and
// the depths closed. It checks that the flat profile in the trace equals
// the one an unreduced run of the same events gives.
//
//	go run ./bench/longrun [-n 1.5e9] [-buffer 16M] [-goroutines 2]
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/hmbtrace/hmbtrace/bench/internal/longrun"
	"github.com/hmbtrace/hmbtrace/measure"
)

func main() {
	n := flag.String("n", "1.5e9", "events in all")
	buf := flag.String("buffer", "16M", "buffer size")
	g := flag.Int("goroutines", 2, "goroutines recording")
	out := flag.String("o", os.TempDir(), "directory for the trace")
	flag.Parse()
	events, err := strconv.ParseFloat(*n, 64)
	if err != nil || events < 1 {
		fmt.Fprintf(os.Stderr, "longrun: -n %q: want a number of events such as 1e9\n", *n)
		os.Exit(2)
	}
	size, err := measure.ParseSize(*buf)
	if err != nil {
		fmt.Fprintf(os.Stderr, "longrun: -buffer: %v\n", err)
		os.Exit(2)
	}
	r, err := longrun.Run(longrun.Options{Events: int64(events), Goroutines: *g, BufferSize: size, Output: *out})
	if err != nil {
		fmt.Fprintln(os.Stderr, "longrun:", err)
		os.Exit(1)
	}
	fmt.Printf("events recorded        %d (%d kept) in %.1f s\n", r.Events, r.Kept, r.Wall.Seconds())
	fmt.Printf("basic-record trace     %.3f GiB (1-byte token, 8-byte time, 4-byte region per event)\n", float64(r.BasicBytes)/(1<<30))
	fmt.Printf("buffer                 %.1f MiB\n", float64(r.BufferSize)/(1<<20))
	fmt.Printf("ratio                  %.0fx\n", r.Ratio())
	fmt.Printf("peak RSS (VmHWM)       %.1f MiB (buffer + %.1f MiB)\n", float64(r.PeakRSS)/(1<<20), float64(r.PeakRSS-int64(r.BufferSize))/(1<<20))
	fmt.Printf("ns/event               %.2f before the first reduction, %.2f after the last (%+.1f%%), driver included\n", r.NsBefore, r.NsAfter, 100*(r.NsAfter-r.NsBefore)/r.NsBefore)
	fmt.Printf("probe ns/event         %.2f before, %.2f after (the driver alone takes %.2f ns/event)\n", r.NsBefore-r.NsDriver, r.NsAfter-r.NsDriver, r.NsDriver)
	fmt.Printf("reductions             %d, closing depths %v\n", r.Reductions, r.DepthsClosed)
	if r.ProfileExact {
		fmt.Println("flat profile           equal to the unreduced reference")
	} else {
		fmt.Println("flat profile           DIFFERS from the unreduced reference:")
		for _, s := range r.ProfileIssues {
			fmt.Println("  ", s)
		}
		os.Exit(1)
	}
	fmt.Printf("trace                  %s\n", r.Path)
}
