// Package buffer owns the Hierarchical Memory Buffer of Wagner, section 3:
// one fixed allocation cut into equal bins, a hierarchy of levels per location
// (calling depth × event class), a shared pool of free bins, and the
// reduction policies that close levels and revoke their bins in O(bins) when
// the pool runs dry, never by scanning events.
//
// # Concurrency
//
// A Hierarchy belongs to one writer (a location). Its hot path, putting a
// record into the current bin of a level, takes no lock and no atomic
// read-modify-write: the writer loads the pool's epoch and compares it with
// the one it last saw. The slow path, once per filled bin, takes the pool's
// mutex to seal the bin, link it into the level's chain and take a new one.
//
// A reduction runs under that mutex in whichever writer found the pool
// empty. It publishes the new closed set by bumping the epoch and revokes
// every sealed bin of the closed levels of every hierarchy at once: sealed
// bins never change again, so their owners need not be asked. A level's
// current bin is its owner's; the owner hands it back on its next probe,
// when it sees the new epoch, or Finalize does.
//
// # Closing no more than needed
//
// A reduction closes one level (one depth, or one class) at a time and
// stops as soon as a bin is free or on its way back: the current bins of
// the closed levels that other writers hold count as freed. The writer
// that needed a bin then takes them back itself rather than close more
// levels or drop its record, so that a depth-reduced trace holds
// everything down to its depth limit, whether their owners probe again
// soon, late (a goroutine the system does not run) or not at all (one
// asleep in a receive or a barrier).
//
// It may take an owner's current bin only while the owner is not putting
// a record into it. The writer marks itself busy from Level.Room, which
// begins every record, to the record's fill mark, which ends it, and Room
// loads the epoch after the mark. measure's probes begin theirs with
// Hierarchy.Begin instead, which marks them busy before the one load of
// the epoch they make anyway, against their own view of it. The reclaiming writer, under the mutex,
// after the closure bumped the epoch, loads the marks: an owner it sees
// idle has either ended its last record, or will see the new epoch at its
// next Room and sync under the mutex before it touches the level again.
// On amd64 the mark is a plain store, and a membarrier before the marks
// are loaded gives the store-load order both sides need (the C probes'
// in_direct mark works the same way); elsewhere, and under the race
// detector, it is an atomic store. The owner that is busy is waited for,
// with the mutex released: a record takes nanoseconds and never blocks
// (BusyWaitLimit bounds it against a writer that never ends one).
//
// The C probes write bins in place (PinForC). Their mark is their
// thread's in_direct, stored from the probe's start to its end and before
// the probe's load of the epoch; PinForC gives it to the hierarchy, and a
// reduction reclaims a C writer's bins while it is 0, as a Go writer's: a
// thread asleep in a barrier or a receive no longer keeps its current
// bins. Where that order cannot be had (mark_atomic.go), or for a C writer
// whose mark is not known, the pool reclaims nothing. There the wait is
// bounded (DefaultWaitLimit, or SetWaitLimit), as it is for a C writer
// in a probe (a signal handler may have interrupted it): owners that have
// not probed by then are counted idle, no take waits for their bins again
// until they sync, and the reduction closes the deepest level up whose
// closure frees a bin, never one that holds only idle owners' current
// bins. If none does, the record is
// dropped (counted as no-bin). A writer that is finished or about to sleep
// calls Hierarchy.Release, which seals its partly filled bins so that a
// reduction takes them at once.
//
// # Outliving the process
//
// With Config.Mapping the bins and their descriptors are a file mapping
// (package internal/survive) that a process leaves behind however it
// dies. Every record is followed by a store of its bin's fill mark, with
// or without a mapping; taking, freeing and closing store the
// bookkeeping in the order internal/survive defines, so that a reader of
// the file after any death sees complete records only.
package buffer
