// Package cshim is the Go side of hmbtrace's C ABI (hmbtrace.h, built by
// cshim/lib into libhmbtrace.so and libhmbtrace.a). A C thread's probes
// write its enters, leaves, messages and collectives into its
// measure.Location themselves, in C (cshim/lib/direct.h), where they can,
// and stage the rest as 16-byte records; a Runtime pins the locations,
// replays the staged records, and names the function addresses that
// -finstrument-functions hooks record by the ELF symbols of the files mapped
// into the process.
//
// # OpenMP
//
// cshim/openmp is libhmbtrace-omp, the OpenMP adapter, in C on the public
// API (hmbtrace.h). For GCC it interposes libgomp's entry points
// (gomp.c); for LLVM's and Intel's libomp it is an OMPT tool (ompt.c).
// Each OpenMP thread is a location named "thread <n>" ("thread <p>:<n>"
// in a nested team); constructs are OpenMP-paradigm regions named by
// their source line, which Runtime.CodeAt finds for hmb_code_at.
//
// Tasks break the per-thread call stack: a task may be suspended at a
// scheduling point inside it and resumed later, and an untied task on
// another thread. The adapter records a task's execution as a region on
// the thread that runs it, entered when the runtime switches to it and
// left when it completes; tasks run at a barrier or taskwait nest inside
// it. This is right whenever a suspended task resumes on the thread that
// suspended it, before that thread leaves the region it suspended in:
// always with libgomp (it never migrates a task, untied ones included)
// and for tied tasks with libomp. An untied task that libomp resumes on
// another thread is entered there again; the first thread keeps it open
// until its implicit task ends, where the leave closes it and counts a
// usage error. The fix is a stack per task rather than per thread, as
// Score-P keeps (Knüpfer et al.): a task's events go to its own region
// stack, and a thread's location records which task runs (a task switch
// record: task id, the task left and the one resumed). The buffer would
// then nest per task, readers would follow the switches to rebuild each
// thread's time line, and the OTF2 export would write
// ThreadTaskCreate/Switch/Complete. That changes the record format and
// every reader, and is left for a decision.
package cshim
