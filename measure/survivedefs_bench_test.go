package measure

import (
	"strconv"
	"testing"
)

// BenchmarkRegionDefs defines new regions, with and without the
// surviving mapping (issue 37, S14: HMB_SURVIVE=1 made 3·10⁵ region
// definitions 4× slower).
func BenchmarkRegionDefs(b *testing.B) {
	names := make([]string, 1<<16)
	for i := range names {
		names[i] = "solver::component::function_" + strconv.Itoa(i)
	}
	for _, surv := range []bool{false, true} {
		b.Run("survive="+strconv.FormatBool(surv), func(b *testing.B) {
			var m *Measurement
			for i := 0; i < b.N; i++ {
				if i%len(names) == 0 {
					b.StopTimer()
					if m != nil {
						m.Close()
					}
					m = startTest(b, Config{Survive: surv, BufferSize: 1 << 20})
					b.StartTimer()
				}
				m.Region(names[i%len(names)])
			}
			b.StopTimer()
			m.Close()
		})
	}
}
