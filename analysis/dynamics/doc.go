// Package dynamics finds how a per-iteration performance series changes
// over time (Oleynik, chapter 6): a Haar wavelet transform
// quantifies variability per scale and per iteration, and scale-space filtering
// locates the relevant peaks, dips, steps and trends, each with the time it
// costs relative to its baseline. It takes plain []float64 series (one value
// per iteration of the progress loop) and knows nothing about trace files;
// render.DescribeFeatures words what it finds.
package dynamics
