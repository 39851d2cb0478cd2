// Package score computes the per-region measurement score of a run, with
// the overhead properties and generated filter file of Oleynik's chapter
// 4, as Score-P's scorep-score does (Knüpfer et al.). hmbtrace score prints
// what it computes.
package score
