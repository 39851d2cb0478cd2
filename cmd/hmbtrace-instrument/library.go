package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// libInfo is where the installed library is.
type libInfo struct {
	libDir     string // libhmbtrace.so, .a, libhmbtrace-mpi.so
	includeDir string // hmbtrace.h, hmbtrace.mod
}

// findLibrary looks for libhmbtrace next to this program (<prefix>/bin and
// <prefix>/lib, as make install and make cshim lay them out), then through
// pkg-config.
func findLibrary() (libInfo, error) {
	var tried []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		prefix := filepath.Dir(filepath.Dir(exe))
		l := libInfo{libDir: filepath.Join(prefix, "lib"), includeDir: filepath.Join(prefix, "include")}
		if fileExists(filepath.Join(l.libDir, "libhmbtrace.so")) || fileExists(filepath.Join(l.libDir, "libhmbtrace.a")) {
			return l, nil
		}
		tried = append(tried, "not in "+l.libDir)
	}
	l, err := pkgConfig()
	if err == nil {
		return l, nil
	}
	tried = append(tried, err.Error())
	return libInfo{}, fmt.Errorf("libhmbtrace not found: %s (make install PREFIX=... puts it next to hmbtrace-instrument; or set PKG_CONFIG_PATH to <prefix>/lib/pkgconfig)", strings.Join(tried, "; "))
}

// pkgConfig asks pkg-config for hmbtrace.pc's directories.
func pkgConfig() (libInfo, error) {
	if _, err := exec.LookPath("pkg-config"); err != nil {
		return libInfo{}, errors.New("no pkg-config on PATH")
	}
	get := func(v string) (string, error) {
		cmd := exec.Command("pkg-config", "--variable="+v, "hmbtrace")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("pkg-config hmbtrace: %v %s", err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	var l libInfo
	var err error
	if l.libDir, err = get("libdir"); err != nil {
		return l, err
	}
	if l.includeDir, err = get("includedir"); err != nil {
		return l, err
	}
	if !fileExists(filepath.Join(l.libDir, "libhmbtrace.so")) && !fileExists(filepath.Join(l.libDir, "libhmbtrace.a")) {
		return l, fmt.Errorf("pkg-config hmbtrace names %s, which holds no libhmbtrace", l.libDir)
	}
	return l, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
