package main

import (
	"io"

	"github.com/hmbtrace/hmbtrace/summary"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func runSummary(args []string, out io.Writer) error {
	fs := newFlags("summary")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError{"want at least one trace file"}
	}
	files, err := openAll(fs.Args())
	if err != nil {
		return err
	}
	defer closeAll(files)
	return summary.Write(out, files)
}

func openAll(paths []string) ([]*tracefile.File, error) {
	var files []*tracefile.File
	for _, p := range paths {
		f, err := tracefile.Open(p)
		if err != nil {
			closeAll(files)
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

func closeAll(files []*tracefile.File) {
	for _, f := range files {
		f.Close()
	}
}
