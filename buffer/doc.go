// Package buffer owns the Hierarchical Memory Buffer of seed 002, section 3:
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
// when it sees the new epoch, or Finalize does. An event that finds no bin is
// dropped and counted, never waited for.
package buffer
