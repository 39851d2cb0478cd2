package cshim

import (
	"os"
	"slices"
	"sort"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Reading /proc/self/maps makes the kernel print every mapping of the
// process, of which an MPI code has hundreds: 0.46 ms of a cxx-mpi rank's
// start, to learn where one file lies. Since Linux 6.11 the PROCMAP_QUERY
// ioctl on that file answers for one address; older kernels, and files
// that are not procfs's, are read as before.

// procmapQuery is the kernel's struct procmap_query (linux/fs.h).
type procmapQuery struct {
	size        uint64
	queryFlags  uint64
	queryAddr   uint64
	vmaStart    uint64
	vmaEnd      uint64
	vmaFlags    uint64
	vmaPageSize uint64
	vmaOffset   uint64
	inode       uint64
	devMajor    uint32
	devMinor    uint32
	vmaNameSize uint32
	buildIDSize uint32
	vmaNameAddr uint64
	buildIDAddr uint64
}

const (
	// _IOWR('f', 17, struct procmap_query)
	procmapQueryIoctl = 3<<30 | uint(unsafe.Sizeof(procmapQuery{}))<<16 | 'f'<<8 | 17

	procmapReadable   = 0x1
	procmapWritable   = 0x2
	procmapExecutable = 0x4
	procmapShared     = 0x8
)

// queryMapping asks the kernel through the maps file at path which mapping
// holds addr. supported is false where the kernel cannot answer so (older
// kernels, a file that is not procfs's); found, whether a mapping holds
// addr.
func queryMapping(path string, addr uint64) (m Mapping, found, supported bool) {
	f, err := os.Open(path)
	if err != nil {
		return m, false, false
	}
	defer f.Close()
	name := make([]byte, 4096)
	q := procmapQuery{
		size:        uint64(unsafe.Sizeof(procmapQuery{})),
		queryAddr:   addr,
		vmaNameSize: uint32(len(name)),
		vmaNameAddr: uint64(uintptr(unsafe.Pointer(&name[0]))),
	}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, f.Fd(), uintptr(procmapQueryIoctl), uintptr(unsafe.Pointer(&q)))
	switch {
	case errno == unix.ENOENT:
		return m, false, true // no mapping holds addr
	case errno != 0:
		return m, false, false
	}
	m = Mapping{Start: q.vmaStart, End: q.vmaEnd, Offset: q.vmaOffset}
	perms := []byte("---p")
	for i, bit := range []uint64{procmapReadable, procmapWritable, procmapExecutable} {
		if q.vmaFlags&bit != 0 {
			perms[i] = "rwx"[i]
		}
	}
	if q.vmaFlags&procmapShared != 0 {
		perms[3] = 's'
	}
	m.Perms = string(perms)
	if n := int(q.vmaNameSize); n > 0 && n <= len(name) {
		// The size counts the terminating NUL.
		if name[n-1] == 0 {
			n--
		}
		m.Path = string(name[:n])
	}
	return m, true, true
}

// insertMapping puts m into maps, sorted by Start, in place of the
// mappings it overlaps (stale: unmapped since they were read).
func insertMapping(maps []Mapping, m Mapping) []Mapping {
	kept := maps[:0:0]
	for _, o := range maps {
		if o.End <= m.Start || o.Start >= m.End {
			kept = append(kept, o)
		}
	}
	i := sort.Search(len(kept), func(i int) bool { return kept[i].Start > m.Start })
	return slices.Insert(kept, i, m)
}

// find returns the mapping that holds addr, asking the kernel when it is
// not known yet.
func (s *Symbolizer) find(addr uint64) (Mapping, bool) {
	if m, ok := s.mapping(addr); ok {
		return m, true
	}
	if m, found, supported := queryMapping(s.mapsPath, addr); supported {
		if found {
			s.maps = insertMapping(s.maps, m)
		}
		return m, found
	}
	// Mapped since the last read (dlopen), or not at all.
	s.readMaps()
	return s.mapping(addr)
}
