package otf2

import (
	"encoding/binary"
	"fmt"
	"os"
)

// Chunk sizes libotf2 accepts (OTF2_Archive_Open refuses anything else).
const (
	MinChunkSize = 256 << 10
	MaxChunkSize = 16 << 20

	DefaultEventChunkSize = 1 << 20
	DefaultDefChunkSize   = 4 << 20
)

// ReaderChunkBudget is what EventChunkSizeFor lets the event chunks of all
// locations take together in a reader.
const ReaderChunkBudget = 1 << 30

// EventChunkSizeFor returns the event chunk size for an archive of the
// given number of locations. A reader holds a chunk of every location at
// once (otf2-print, and libotf2's global event reader under it, opens every
// location's events to merge them), so at 1 MiB per location 10^4
// locations need 10 GB to be read. The chunk is the largest power of two
// that keeps all of them within ReaderChunkBudget, from MinChunkSize (the
// least libotf2 accepts: 10^4 locations need 2.5 GB, 10^5 25 GB) to
// DefaultEventChunkSize (up to 1024 locations, libotf2's own size).
func EventChunkSizeFor(locations int) int {
	size := DefaultEventChunkSize
	for size > MinChunkSize && size*locations > ReaderChunkBudget {
		size /= 2
	}
	return size
}

// chunkedFile is an OTF2 chunked buffer being written to one file: every
// chunk but the last is exactly len(buf) bytes, zero padded, and starts with
// an 18-byte header. Only the current chunk is held in memory; a full chunk is
// appended to the file and the buffer reused, so memory stays at one chunk
// whatever the file size.
type chunkedFile struct {
	path string
	buf  []byte // current chunk; len(buf) is the chunk size
	pos  int    // next free byte in buf
	// countEvents selects the header of event files (first and last event
	// number of the chunk, 1-based over the file). Definition files always
	// carry first = 1, last = 0.
	countEvents bool
	written     int64 // bytes appended to the file so far
}

// startChunk writes the header of a new chunk whose first event will be
// number firstEvent (ignored for definition files).
func (c *chunkedFile) startChunk(firstEvent uint64) {
	if !c.countEvents {
		firstEvent = 1
	}
	b := c.buf
	b[0] = chunkHeader
	b[1] = littleEndianMarker
	binary.LittleEndian.PutUint64(b[2:10], firstEvent)
	binary.LittleEndian.PutUint64(b[10:18], 0)
	c.pos = chunkHeaderLen
}

// room reports whether a record of at most bound bytes may be placed in the
// current chunk. libotf2 places a record only if its upper bound is strictly
// less than the free space, so at least one END_OF_CHUNK byte always remains.
func (c *chunkedFile) room(bound int) bool {
	return bound < len(c.buf)-c.pos
}

// flushChunk pads the current chunk with END_OF_CHUNK bytes and appends it to
// the file; lastEvent is the number of the chunk's last event.
func (c *chunkedFile) flushChunk(lastEvent uint64) error {
	if c.countEvents {
		binary.LittleEndian.PutUint64(c.buf[10:18], lastEvent)
	}
	clear(c.buf[c.pos:])
	return c.appendToFile(c.buf)
}

// finish terminates the buffer with END_OF_FILE, END_OF_BUFFER and appends
// the truncated last chunk. If the last record left only the one reserved
// byte, the terminator goes into a chunk of its own that holds no record;
// otf2-print and python3-otf2 read that layout (TestTerminatorChunk).
// libotf2 crashes when it closes a file in this state, so there is no
// libotf2 layout to follow.
func (c *chunkedFile) finish(lastEvent uint64) error {
	if len(c.buf)-c.pos < 2 {
		if err := c.flushChunk(lastEvent); err != nil {
			return err
		}
		c.startChunk(lastEvent + 1)
	}
	if c.countEvents {
		binary.LittleEndian.PutUint64(c.buf[10:18], lastEvent)
	}
	c.buf[c.pos] = endOfFile
	c.buf[c.pos+1] = endOfBuffer
	return c.appendToFile(c.buf[:c.pos+2])
}

// appendToFile opens the file for each chunk rather than holding it open, so
// that thousands of open event writers do not need thousands of descriptors.
// A chunk is at least 256 KiB, so the open is noise.
func (c *chunkedFile) appendToFile(b []byte) error {
	f, err := os.OpenFile(c.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("otf2: %w", err)
	}
	n, err := f.Write(b)
	c.written += int64(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("otf2: writing %s at offset %d: %w", c.path, c.written, err)
	}
	return nil
}

// createEmpty creates path exclusively, so that an existing file is never
// overwritten, and leaves it empty for appendToFile.
func createEmpty(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("otf2: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("otf2: %w", err)
	}
	return nil
}
