// Package report owns hmbtrace's HTML report: one self-contained page (inline
// CSS and JavaScript, inline SVG, system fonts, nothing fetched) with a run's
// facts and buffer story, the sortable flat profile, a zoomable timeline of
// every location's calls whose level-of-detail encoding stays small and fast
// for millions of events, the variation heat map, the dynamics findings, the
// communication views and the counters. hmbtrace report writes it.
//
// It reads the trace once, the locations on Options.Procs workers
// (hmbtrace report -procs; by default HMB_TOOL_PROCS, else GOMAXPROCS) whose
// results are merged in location order (the page does not depend on their
// number), and keeps of each location its timeline tiles and at most a
// bounded number of segment groups: its memory is bounded by those budgets
// and the number of locations, not by the events.
package report
