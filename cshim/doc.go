// Package cshim is the Go side of hmbtrace's C ABI (hmbtrace.h, built by
// cshim/lib into libhmbtrace.so and libhmbtrace.a). C threads stage their
// probes as 16-byte records in arrays of their own; a Runtime replays each
// batch into the thread's measure.Location, and names the function addresses
// that -finstrument-functions hooks record by the ELF symbols of the files
// mapped into the process.
package cshim
