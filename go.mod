module github.com/hmbtrace/hmbtrace

go 1.24.0

require (
	github.com/klauspost/cpuid/v2 v2.4.2
	golang.org/x/sys v0.41.0
)
