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
// that needed a bin then waits for them, with the mutex released
// (runtime.Gosched, then sleeps of at most 1 ms), rather than close more
// levels or drop its record: a record at a depth the trace keeps is not
// dropped for want of a bin while bins are coming back, so a depth-reduced
// trace holds everything down to its depth limit. The wait is bounded
// (DefaultWaitLimit, or SetWaitLimit): owners that have not probed by then
// are counted idle, no take waits for their bins again until they sync,
// and the reduction closes the next level up. That is the one case where
// it closes more than it must, and where a record may still be dropped
// (counted as no-bin) if even that frees nothing. A writer that is
// finished or about to sleep calls Hierarchy.Release, which seals its
// partly filled bins so that a reduction takes them at once.
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
