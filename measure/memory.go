package measure

import (
	"fmt"
	"strconv"
)

// formatSize writes a size as HMB_BUFFER_SIZE takes it: 64M, not 67108864.
func formatSize(n int) string { return formatSize64(uint64(n)) }

func formatSize64(n uint64) string {
	for _, u := range []struct {
		shift  uint
		suffix string
	}{{30, "G"}, {20, "M"}, {10, "K"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatUint(n>>u.shift, 10) + u.suffix
		}
	}
	if n >= 1<<30 {
		return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
	}
	return strconv.FormatUint(n, 10)
}
