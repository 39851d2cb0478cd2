package measure

import (
	"fmt"
	"os"
	"reflect"
	"strings"
)

// A program built with hmbtrace-go records from its first probe, in the
// measurement measure/auto starts then (package initialisation, or
// main.main's own probe): always before main's body. A Start of the
// program's own came second and started a second measurement of the same
// process and rank, whose trace competed with the first for the file
// (<name>.0.hmb and <name>.0.pid<pid>.hmb, which the tools then refused as
// two rank 0s), main's region alone in one of them. Start joins the
// automatic measurement instead, and the program's Close leaves it to
// auto's, which ends it when main returns, after main's region.

// markAutomatic marks m as the one measure/auto started.
func (m *Measurement) markAutomatic() { m.automatic.Store(true) }

// joinAutomatic returns the running automatic measurement, joined, or nil
// if none runs. Config's fields set in cfg cannot apply to a measurement
// that runs already: they are named on stderr.
func joinAutomatic(cfg Config) *Measurement {
	m := Current()
	if m == nil || !m.automatic.Load() || m.closing.Load() {
		return nil
	}
	m.joins.Add(1)
	if set := setFields(cfg); len(set) > 0 {
		fmt.Fprintf(os.Stderr, "hmbtrace: measure.Start joins the measurement hmbtrace-go's instrumentation began at the program's first probe; "+
			"its Config (%s) does not apply: set the HMB_* variables instead\n", strings.Join(set, ", "))
	}
	return m
}

// setFields names cfg's fields that are not zero.
func setFields(cfg Config) []string {
	var set []string
	v := reflect.ValueOf(cfg)
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() && !v.Field(i).IsZero() {
			set = append(set, f.Name)
		}
	}
	return set
}

// leaveJoined reports whether m's Close is that of a Start that joined
// it, which leaves it running.
func (m *Measurement) leaveJoined() bool {
	for {
		j := m.joins.Load()
		if j <= 0 {
			return false
		}
		if m.joins.CompareAndSwap(j, j-1) {
			return true
		}
	}
}

// endJoins forgets the Starts that joined m, so that the Close that
// follows, measure/auto's, ends it.
func (m *Measurement) endJoins() { m.joins.Store(0) }
