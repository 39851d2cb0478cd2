// Package report owns hmbtrace's HTML report: one self-contained page (inline
// CSS and JavaScript, inline SVG, system fonts, nothing fetched) with a run's
// facts and buffer story, the sortable flat profile, a zoomable timeline of
// every location's calls whose level-of-detail encoding stays small and fast
// for millions of events, the variation heat map, the dynamics findings, the
// communication views and the counters. hmbtrace report writes it.
package report
