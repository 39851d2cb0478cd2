// Package cshim is the Go side of hmbtrace's C ABI (hmbtrace.h, built by
// cshim/lib into libhmbtrace.so and libhmbtrace.a). A C thread's probes
// write its enters, leaves, messages and collectives into its
// measure.Location themselves, in C (cshim/lib/direct.h), where they can,
// through the view of the Go objects that go generate ./measure writes into
// cshim/lib/golayout.h (a mismatch fails the C build), and stage the rest as 16-byte records; a Runtime pins the locations,
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
// scheduling point inside it and resumed later, an untied one on another
// thread. Both adapters record a task's life with hmb_task_create (the
// creating thread: a TASK_CREATE record and an id unique in the process),
// hmb_task_switch (the thread that starts or resumes it, and the switch
// back to the task it interrupted, 0 for its implicit task) and
// hmb_task_complete; between its first switch and its completion the
// thread records the task's region "!$omp task @file:line" and what runs
// inside it. A task runs as a call from a scheduling point of the thread
// that picks it (a barrier, taskwait, taskgroup end or task creation), so
// its regions nest on that thread's stack above the scheduling point, and
// a task suspended at a taskwait resumes there after the tasks run inside
// it: each location's stream stays well nested, as the buffer's depth
// levels and the reader need. Score-P's per-task region stacks (Knüpfer et
// al.) are the pieces of the stream between switch records; the OTF2
// export writes ThreadTaskCreate/Switch/Complete so that tools rebuild
// them. libgomp never migrates a task (it runs untied ones as tied). An
// untied task whose code libomp returns to the scheduler with regions open
// (to resume it later, maybe on another thread) is suspended:
// hmb_task_suspend leaves its regions on the thread it stops on, and the
// switch that resumes it enters them again (a KindTaskSuspend record;
// ompt.c tells such a suspension from a nested one). Only such a task needs
// the Go location's record of where it started on a thread: a tied task's
// switches and completion (hmb_task_switch_tied, hmb_task_complete_tied:
// every task of libgomp, and libomp's tied ones), its creation and a switch
// to the implicit task are written in place by the C probes' direct path
// (lib/task.c), about a C probe each, and replayed with measure's
// tied-task replay (through internal/measureinternal, as the rest of what
// only the shim calls) where the direct path hands over to Go.
package cshim
