// Package analysis points the analyst at the slow and the costly parts of a
// run, from trace files read by package tracefile: the time-dominant region and
// the synchronization-oblivious segment times of its invocations with their
// outliers and hot/cold view (Weber et al.), and the per-region
// measurement score with the overhead properties and generated filter file of
// Oleynik's chapter 4, as Score-P's scorep-score does.
// hmbtrace variation and hmbtrace score print what it computes.
package analysis
