package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	path := record(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.html"), filepath.Join(dir, "b.html")
	for _, c := range []struct {
		args []string
		html string
	}{
		{[]string{"report", path, "-o", a}, a}, // flags after the files, as the usage says
		{[]string{"report", "-title", "two", "-procs", "2", "-o", b, path, path}, b},
	} {
		var out, errOut bytes.Buffer
		if rc := run(c.args, &out, &errOut); rc != 0 {
			t.Fatalf("hmbtrace %v: exit %d: %s", c.args, rc, errOut.String())
		}
		page, err := os.ReadFile(c.html)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) || !bytes.Contains(page, []byte(`<section id="timeline">`)) {
			t.Errorf("%s is no report", c.html)
		}
		if !strings.HasPrefix(out.String(), c.html+": ") || !strings.HasSuffix(out.String(), " MiB\n") {
			t.Errorf("hmbtrace %v printed %q", c.args, out.String())
		}
	}
	// The same file twice: both say rank 0, so locations are named by file.
	if page, _ := os.ReadFile(b); !bytes.Contains(page, []byte("<title>two</title>")) || !bytes.Contains(page, []byte(filepath.Base(path)+": alpha")) {
		t.Errorf("b.html: no title or no locations named by file")
	}
}

func TestReportErrors(t *testing.T) {
	path := record(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "want at least one trace file"},
		{[]string{"report", "-o", out}, "want at least one trace file"},
		{[]string{"report", path, "-o", ""}, "-o wants a file name"},
		{[]string{"report", path, "-top", "0", "-o", out}, "-top wants at least 1"},
		{[]string{"report", path, "-rows", "0", "-o", out}, "-rows wants at least 1"},
		{[]string{"report", filepath.Join(dir, "missing.hmb"), "-o", out}, "no such file"},
		{[]string{"report", path, "-o", dir}, "is a directory"},
		{[]string{"report", path, "-o", filepath.Join(dir, "no", "such", "dir.html")}, "no such file or directory"},
		{[]string{"report", path, "-x"}, "flag provided but not defined"},
		{[]string{"report", path, "-procs", "-2", "-o", out}, "-procs"},
	} {
		var stdout, errOut bytes.Buffer
		if rc := run(c.args, &stdout, &errOut); rc != 1 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("hmbtrace %q: exit %d, %q; want exit 1 and %q", c.args, rc, errOut.String(), c.want)
		}
		if strings.Count(errOut.String(), "\n") > 2 {
			t.Errorf("hmbtrace %q: more than an error and the usage: %q", c.args, errOut.String())
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed reports left %d files behind", len(entries))
	}
}
