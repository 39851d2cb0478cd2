package report

import (
	"strings"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// kind is what a region is to a reader of the timeline: the paradigm its
// colour tells, as Vampir colours MPI red and gives the program's own
// functions the other hues.
type kind uint8

const (
	kindUser    kind = iota // the program's functions and annotated regions
	kindMPI                 // MPI calls but its I/O
	kindOpenMP              // OpenMP constructs and their synchronisation
	kindIO                  // file I/O: MPI-IO, POSIX and C stdio calls, HDF5, NetCDF
	kindRuntime             // Go's runtime: GC, goroutine waits
	numKinds
)

// kindInfo is the one definition of the paradigms' names and colours: the
// page's script reads them from its data (legend, timeline, profile), so
// that Go and JavaScript cannot disagree. User regions take hues from
// userHues, which leave out the reds of MPI and the oranges of OpenMP.
var kindInfo = [numKinds]struct {
	Name  string `json:"name"`
	Color string `json:"color"` // the legend's swatch; regions of the kind vary around it
}{
	kindUser:    {"your code (greens to violets)", "#3f9f8f"},
	kindMPI:     {"MPI", "#d62728"},
	kindOpenMP:  {"OpenMP", "#e08a1e"},
	kindIO:      {"I/O", "#c9b200"},
	kindRuntime: {"Go runtime", "#8c8c8c"},
}

// ioCalls are the names of I/O calls the wrappers and the compiler
// instrumentation record, beyond the prefixes of ioPrefixes.
var ioCalls = map[string]bool{
	"open": true, "open64": true, "openat": true, "close": true, "read": true, "write": true,
	"pread": true, "pwrite": true, "pread64": true, "pwrite64": true, "readv": true, "writev": true,
	"lseek": true, "lseek64": true, "fsync": true, "fdatasync": true, "creat": true,
	"fopen": true, "fopen64": true, "fclose": true, "fread": true, "fwrite": true, "fflush": true,
	"fseek": true, "fgets": true, "fputs": true, "fprintf": true, "fscanf": true,
}

var ioPrefixes = []string{"MPI_File_", "H5", "nc_", "ncmpi_", "adios2_", "os.(*File)."}

// kindOf classifies a region by its recorded paradigm and, for the kinds
// the file format does not name (I/O), by its name.
func kindOf(name string, p tracefile.Paradigm) kind {
	for _, pre := range ioPrefixes {
		if strings.HasPrefix(name, pre) {
			return kindIO
		}
	}
	if ioCalls[name] {
		return kindIO
	}
	switch {
	case p == tracefile.ParadigmMPI || strings.HasPrefix(name, "MPI_"):
		return kindMPI
	case p == tracefile.ParadigmOpenMP || strings.HasPrefix(name, "!$omp"):
		return kindOpenMP
	case p == tracefile.ParadigmGo:
		return kindRuntime
	}
	return kindUser
}
