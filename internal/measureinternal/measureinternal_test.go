package measureinternal_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/encode"
	"github.com/hmbtrace/hmbtrace/internal/measureinternal"
	"github.com/hmbtrace/hmbtrace/measure"
)

// Package measure registers every operation: a field added here and not
// filled in there would be a nil call in the C shim.
func TestMeasureRegistersEveryOperation(t *testing.T) {
	f := measureinternal.Of[*measure.Location, *measure.Measurement]()
	v := reflect.ValueOf(f).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsNil() {
			t.Errorf("measure did not register %s", v.Type().Field(i).Name)
		}
	}
}

// The operations work on a nil or disabled measurement as the C shim
// calls them before Start or under HMB_ENABLE=0.
func TestOperationsOnDisabledMeasurement(t *testing.T) {
	f := measureinternal.Of[*measure.Location, *measure.Measurement]()
	if w, err := f.DefineWin(nil, 1); w != 0 || err != nil {
		t.Errorf("DefineWin on nil: %d, %v", w, err)
	}
	if err := f.NameWin(nil, 1, "w"); err != nil {
		t.Errorf("NameWin on nil: %v", err)
	}
	if g, err := f.DefineRmaGroup(nil, []int32{0}); g != 0 || err != nil {
		t.Errorf("DefineRmaGroup on nil: %d, %v", g, err)
	}
	// A nil *Location is what a disabled measurement hands out.
	f.UnpinC(nil)
	f.Interrupt(nil)
	f.AddDropped(nil, 0, 0, 1)
	f.RecordAt(nil, encode.Record{Kind: encode.KindSend}, 1)
	f.TiedTaskAt(nil, encode.KindTaskSwitch, 1, 1)
	f.SetTeam(nil, []int{0})
}

// Of with types other than measure's is a mistake of this module, which
// it names.
func TestOfWrongInstance(t *testing.T) {
	defer func() {
		p := recover()
		msg, _ := p.(string)
		if !strings.Contains(msg, "Of[int, string]") || !strings.Contains(msg, "measure.Location") {
			t.Errorf("panic %v, want one naming the instance and what measure registered", p)
		}
	}()
	measureinternal.Of[int, string]()
}
