package tracefile

import (
	"os"
	"syscall"
)

// mapFile maps size bytes of f read-only and shared, so that the pages a
// mapping file never wrote stay untouched; release unmaps them.
func mapFile(f *os.File, size int) (b []byte, release func(), err error) {
	b, err = syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}
