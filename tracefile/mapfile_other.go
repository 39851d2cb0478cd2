//go:build !linux

package tracefile

import (
	"io"
	"os"
)

// mapFile reads size bytes of f. Off Linux a mapping file was made
// elsewhere and copied here: reading all of it, the sparse definition log's
// room included, costs a copy and no more.
func mapFile(f *os.File, size int) (b []byte, release func(), err error) {
	b = make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(size)), b); err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}
