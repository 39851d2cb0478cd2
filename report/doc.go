// Package report owns hmbtrace's HTML report: one self-contained page (inline
// CSS and JavaScript, inline SVG, system fonts, nothing fetched) with a run's
// facts and buffer story, the sortable flat profile, a zoomable timeline of
// every location's calls whose level-of-detail encoding stays small and fast
// for millions of events, the variation heat map, the dynamics findings, the
// communication views and the counters. hmbtrace report writes it.
//
// A run with more timeline rows than Options.Rows (a screen's worth) is
// drawn in groups of consecutive ranks, in the timeline and in every view
// per location, so that its page is as large at 512 ranks as at 32
// (groups.go); the tasks that ran on a location (a Go lane's goroutines,
// OpenMP's explicit tasks) are marked on its row (tasks.go).
//
// It reads the trace once, the locations on Options.Procs workers
// (hmbtrace report -procs; by default HMB_TOOL_PROCS, else GOMAXPROCS) whose
// results are merged in location order (the page does not depend on their
// number), and keeps of each location its timeline tiles and at most a
// bounded number of segment groups: its memory is bounded by those budgets
// and the number of locations, not by the events.
package report
