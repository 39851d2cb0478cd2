package otf2

import (
	"encoding/binary"
	"fmt"
	"os"
)

// OTF2 version written into the anchor file; readers do not check it.
const (
	versionMajor, versionMinor, versionBugfix = 3, 0, 2

	anchorFormat = 3
	traceFormat  = 2

	substratePOSIX  = 1
	compressionNone = 1
)

// anchorBytes encodes the anchor file: a non-chunked buffer (header 03 42,
// no event counters) ending with END_OF_FILE, END_OF_BUFFER, END_OF_CHUNK.
func (a *Archive) anchorBytes(locations, globalDefs uint64) []byte {
	b := make([]byte, 0, 128+len(a.machine)+len(a.creator)+len(a.desc))
	b = append(b, chunkHeader, littleEndianMarker)
	b = append(b, "OTF2\x00"...)
	b = append(b, anchorFormat, traceFormat, versionMajor, versionMinor, versionBugfix)
	b = appendU64(b, uint64(a.evtChunkSize))
	b = appendU64(b, uint64(a.defChunkSize))
	b = append(b, substratePOSIX, compressionNone)
	b = appendU64(b, locations)
	// Readers check this count against traces.def: it must be exact.
	b = appendU64(b, globalDefs)
	b = appendString(b, a.machine)
	b = appendString(b, a.creator)
	b = appendString(b, a.desc)
	b = binary.LittleEndian.AppendUint32(b, 0) // properties
	b = appendU64(b, a.traceID)
	b = binary.LittleEndian.AppendUint32(b, 0) // snapshots
	b = binary.LittleEndian.AppendUint32(b, 0) // thumbnails
	return append(b, endOfFile, endOfBuffer, endOfChunk)
}

func (a *Archive) writeAnchor(locations, globalDefs uint64) error {
	f, err := os.OpenFile(a.anchorPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("otf2: %w", err)
	}
	a.created = append(a.created, a.anchorPath)
	_, err = f.Write(a.anchorBytes(locations, globalDefs))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("otf2: writing %s: %w", a.anchorPath, err)
	}
	return nil
}
