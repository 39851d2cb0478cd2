package main

import (
	"io/fs"
	"os"
)

// blocksOnDisk and peakRSS say nothing on Windows, which has neither
// st_blocks nor getrusage; the section that uses them (MPI runs at scale)
// needs Linux anyway.
func blocksOnDisk(fs.FileInfo) int64 { return 0 }

func peakRSS(*os.ProcessState) (float64, bool) { return 0, false }
