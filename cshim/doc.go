// Package cshim is the Go side of hmbtrace's C ABI (hmbtrace.h, built by
// cshim/lib into libhmbtrace.so and libhmbtrace.a). A C thread's probes
// write its enters, leaves, messages and collectives into its
// measure.Location themselves, in C (cshim/lib/direct.h), where they can,
// and stage the rest as 16-byte records; a Runtime pins the locations,
// replays the staged records, and names the function addresses that
// -finstrument-functions hooks record by the ELF symbols of the files mapped
// into the process.
package cshim
