// Package variation points the analyst at the slow parts of a run, from
// trace files read by package tracefile: the time-dominant region and the
// synchronization-oblivious segment times of its invocations with their
// outliers and hot/cold view (Weber et al.). hmbtrace variation prints what
// it computes.
//
// Analyze reads the events itself. A tool that reads them once for several
// views (the report) uses the same steps: a Planner's Plan, a Scanner per
// location, then Variation.Score and Plan.Notes.
package variation
