module github.com/hmbtrace/hmbtrace

go 1.24.0

require (
	github.com/klauspost/cpuid/v2 v2.4.2
	golang.org/x/sys v0.41.0
)

require (
	github.com/chzyer/readline v1.5.1 // indirect
	github.com/google/pprof v0.0.0-20260709232956-b9395ee17fa0 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20250417193237-f615e6bd150b // indirect
)
