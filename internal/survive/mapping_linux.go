//go:build linux

package survive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// Supported reports whether this system has the surviving mapping: a
// shared file mapping on a tmpfs, reserved with fallocate, whose process is
// told from a later one by /proc's start time. Linux has all three.
const Supported = true

// reserveLocked makes sure that the first need bytes of the part at off,
// of which *done are reserved and cap exist, are backed by the file
// system's memory: a store to a page tmpfs cannot give is a SIGBUS.
func (m *Mapping) reserveLocked(off uint64, done *uint64, need, cap uint64) bool {
	if need <= *done {
		return true
	}
	if m.reserveSkip > 0 {
		m.reserveSkip--
		return false
	}
	grow := min(max(chunk, need-*done), cap-*done)
	err := fallocate(int(m.f.Fd()), 0, int64(off+*done), int64(grow))
	if err != nil && !errors.Is(err, syscall.EOPNOTSUPP) {
		m.reserveBackoff = min(max(1, 2*m.reserveBackoff), maxReserveBackoff)
		m.reserveSkip = m.reserveBackoff
		return false
	}
	m.reserveBackoff = 0
	*done += grow
	return true
}

// fallocate is syscall.Fallocate; tests make it fail.
var fallocate = syscall.Fallocate

// maxReserveBackoff bounds the reservations skipped after a failure, so
// that memory the file system frees later is used again soon.
const maxReserveBackoff = 1024

// Create makes the mapping file in dir and maps it. The file is sized at
// once (sparse): a bus error on a full tmpfs would otherwise strike a probe.
func Create(dir, name string, rank int, l Layout) (*Mapping, error) {
	if l.Bins <= 0 || l.BinSize <= 0 {
		return nil, fmt.Errorf("survive: layout of %d bins of %d bytes", l.Bins, l.BinSize)
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	offLevels, offLocs, offDescs, offDefs, offBins, size := l.offsets()
	// A file of this name is another process's that had this pid and
	// died unrecovered: keep it, take the next name.
	path := filepath.Join(dir, FileName(name, rank, os.Getpid()))
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	for i := 2; errors.Is(err, os.ErrExist) && i < 100; i++ {
		path = filepath.Join(dir, strings.TrimSuffix(FileName(name, rank, os.Getpid()), ".shm")+fmt.Sprintf("-%d.shm", i))
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	}
	if err != nil {
		return nil, fmt.Errorf("survive: %v", err)
	}
	fail := func(format string, a ...any) (*Mapping, error) {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("survive: "+format, a...)
	}
	if err := f.Truncate(int64(size)); err != nil {
		return fail("sizing %s to %d bytes: %v", path, size, err)
	}
	// Reserve the header's and the bins' memory now, so that a full tmpfs
	// fails here and not with SIGBUS in a probe; the tables and the log
	// are reserved as they grow, a MiB at a time (NewLevel, Loc, Append),
	// so that a small buffer does not take 10 MiB of tables.
	reserve := func(off, n uint64) error {
		err := syscall.Fallocate(int(f.Fd()), 0, int64(off), int64(n))
		if errors.Is(err, syscall.EOPNOTSUPP) {
			return nil // a file system that cannot: its pages come as written
		}
		return err
	}
	if err := reserve(0, HeaderSize); err != nil {
		return fail("reserving the header in %s: %v", path, err)
	}
	if err := reserve(offDescs, offDefs-offDescs); err != nil {
		return fail("reserving %d bytes for the bins' descriptors in %s: %v", offDefs-offDescs, path, err)
	}
	if err := reserve(offBins, size-offBins); err != nil {
		return fail("reserving %d bytes for the buffer in %s: %v (HMB_SURVIVE_DIR is too small: free it, or choose another)", size-offBins, path, err)
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return fail("mapping %s: %v", path, err)
	}
	m := &Mapping{path: path, mem: mem, hdr: (*Header)(unsafe.Pointer(&mem[0])), f: f}
	m.levels = unsafe.Slice((*LevelEntry)(unsafe.Pointer(&mem[offLevels])), l.LevelCap)
	m.locs = unsafe.Slice((*LocEntry)(unsafe.Pointer(&mem[offLocs])), l.LocCap)
	m.Descs = unsafe.Slice((*BinDesc)(unsafe.Pointer(&mem[offDescs])), l.Bins)
	m.defs = mem[offDefs : offDefs+uint64(l.DefCap) : offDefs+uint64(l.DefCap)]
	m.Bins = mem[offBins:size:size]
	h := m.hdr
	h.Version = Version
	h.PID = uint64(os.Getpid())
	h.StartTime, _ = ProcessStart(os.Getpid())
	h.Bins, h.BinSize = uint64(l.Bins), uint64(l.BinSize)
	h.LevelCap, h.LocCap, h.DefCap = uint64(l.LevelCap), uint64(l.LocCap), uint64(l.DefCap)
	h.OffLevels, h.OffLocs, h.OffDescs, h.OffDefs, h.OffBins, h.FileSize = offLevels, offLocs, offDescs, offDefs, offBins, size
	h.State = StateRunning
	// The magic last: a file without it is not read as a mapping.
	copy(h.Magic[:], Magic)
	return m, nil
}

// checkDir refuses a directory on a network file system: a shared mapping
// there turns every probe's store into traffic.
func checkDir(dir string) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return fmt.Errorf("survive: HMB_SURVIVE_DIR=%s: %v", dir, err)
	}
	switch uint32(st.Type) { // int32 on 32-bit platforms
	case 0x6969, 0xff534d42, 0xfe534d42, 0x517b, 0x65735546, 0x47504653, 0x0bd00bd0, 0x5346414f:
		// NFS, CIFS, SMB2, SMB, FUSE, GPFS, Lustre, AFS
		return fmt.Errorf("survive: HMB_SURVIVE_DIR=%s is on a network file system (type 0x%x): every store would go over the network; use a local tmpfs such as /dev/shm", dir, st.Type)
	}
	return nil
}

// Unmap releases the memory. Nothing may touch the mapping afterwards:
// call it when the buffer is unreachable.
func (m *Mapping) Unmap() error { return syscall.Munmap(m.mem) }

// processZombie reports whether pid has exited and waits to be reaped
// (state Z, or X while it is being reaped).
func processZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+3 > len(s) {
		return false
	}
	return s[i+2] == 'Z' || s[i+2] == 'X'
}

// ProcessStart returns a process's start time in clock ticks since boot,
// which tells a live process from a later one with the same pid.
func ProcessStart(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces and parentheses: fields count
	// from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64) // field 22 of the whole line
}
