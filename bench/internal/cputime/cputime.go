// Package cputime reads the CPU time of the calling OS thread and of the
// process, which the benchmarks time their loops with: on a shared
// machine wall time counts the time a thread waited for a CPU. Linux and
// macOS read clock_gettime and getrusage; Windows, GetThreadTimes and
// GetProcessTimes, whose counts advance at the scheduler's tick.
package cputime
