package main

import (
	"io"

	"github.com/hmbtrace/hmbtrace/render"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
)

func runComm(args []string, out io.Writer) error {
	fs := newFlags("comm")
	tsv := fs.Bool("tsv", false, "print <from>\\t<to>\\t<messages>\\t<bytes> for every communicating pair")
	matrix := fs.String("matrix", "", "write the communication matrix as SVG to this file")
	diagram := fs.String("diagram", "", "write the sender/receiver diagram as SVG to this file")
	value := fs.String("value", "messages", "what the matrix colours: messages, bytes or mean (message size)")
	procsOpt := procsFlag(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v, err := comm.ParseValue(*value)
	if err != nil {
		return usageError{err.Error()}
	}
	files, procs, err := openProcs(fs.Args(), *procsOpt)
	if err != nil {
		return err
	}
	defer closeAll(files)
	m, err := comm.FromFilesProcs(files, procs)
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
