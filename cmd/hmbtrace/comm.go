package main

import (
	"fmt"
	"io"

	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

func runComm(args []string, out io.Writer) error {
	fs := newFlags("comm")
	tsv := fs.Bool("tsv", false, "print <from>\\t<to>\\t<messages>\\t<bytes> for every communicating pair")
	matrix := fs.String("matrix", "", "write the communication matrix as SVG to this file")
	diagram := fs.String("diagram", "", "write the sender/receiver diagram as SVG to this file")
	value := fs.String("value", "messages", "what the matrix colours: messages, bytes or mean (message size)")
	insitu := fs.Bool("insitu", false, "of a run archive, the exact matrix the ranks reduced over MPI at MPI_Finalize (its results), not the one of its ranks' traces")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v, err := comm.ParseValue(*value)
	if err != nil {
		return usageError{err.Error()}
	}
	var m *comm.Matrix
	if *insitu || resultsOnly(fs.Args()) {
		m, err = inSituComm(fs.Args())
	} else {
		m, err = commOfFiles(fs.Args(), *procsOpt)
	}
	if err != nil {
		return err
	}
	for _, w := range []struct {
		path string
		draw func(io.Writer) error
	}{
		{*matrix, func(w io.Writer) error { return render.CommMatrixSVG(w, m, v) }},
		{*diagram, func(w io.Writer) error { return render.CommDiagramSVG(w, m) }},
	} {
		if w.path == "" {
			continue
		}
		if err := writeFile(w.path, w.draw); err != nil {
			return err
		}
	}
	if *tsv {
		return render.CommTSV(out, m)
	}
	return render.CommText(out, m)
}

// commOfFiles returns the matrix of the traces at paths.
func commOfFiles(paths []string, flagProcs int) (*comm.Matrix, error) {
	files, procs, err := openProcs(paths, flagProcs)
	if err != nil {
		return nil, err
	}
	defer closeAll(files)
	return comm.FromFilesProcs(files, procs)
}

// inSituComm returns the matrix the ranks reduced in-situ, which a run
// archive's results hold.
func inSituComm(paths []string) (*comm.Matrix, error) {
	b, path, err := inSituResult(paths, tracefile.ResultComm, "communication matrix")
	if err != nil {
		return nil, err
	}
	parts, err := comm.UnmarshalParts(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return comm.FromParts(parts), nil
}
