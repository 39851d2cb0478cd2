package trend

import (
	"encoding/json"
	"fmt"

	"github.com/hmbtrace/hmbtrace/analysis/variation"
)

// InSitu is what the ranks of an MPI run cut in-situ for the dynamics at
// the collective end: each rank its own phase series (RankPhaseSeries),
// gathered up a reduction tree in rank order (about 20 bytes per sample,
// per region and metric, per location); a run archive's results keep it
// (tracefile.ResultDynamics). Without phase series the iterations are the
// segments of the in-situ variation analysis (SegmentSeries). Analyze
// analyses them as Analyze does the files' series, with the options given
// when it is read, not when the run ended.
type InSitu struct {
	Source Source
	Series []*Series
	Notes  []variation.Note `json:",omitempty"`
}

// Merge appends o, the series of ranks after s's.
func (s *InSitu) Merge(o *InSitu) {
	if o.Source.Region != "" {
		s.Source = o.Source
	}
	s.Series = append(s.Series, o.Series...)
}

// Analyze analyses the series as Analyze analyses those of the files.
func (s *InSitu) Analyze(opt Options) (*Result, error) {
	return AnalyzeSeries(s.Source, s.Series, s.Notes, opt)
}

// EncodeInSitu returns the binary form of s.
func EncodeInSitu(s *InSitu) ([]byte, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("trend: in-situ series: %v", err)
	}
	return b, nil
}

// DecodeInSitu reads what EncodeInSitu wrote.
func DecodeInSitu(b []byte) (*InSitu, error) {
	var s InSitu
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("trend: in-situ series: %v", err)
	}
	for i, x := range s.Series {
		if x == nil || x.Width == 0 {
			return nil, fmt.Errorf("trend: in-situ series %d: no values or a width of 0", i)
		}
	}
	return &s, nil
}
