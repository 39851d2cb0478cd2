package main

import (
	"fmt"
)

// runReduction times one depth reduction of a full buffer, the HMB's and a
// flat scan-and-compact buffer's, at three sizes, interleaved.
func runReduction(o *options, r *report) error {
	sizes := []int{8, 64, 256}
	for round := 0; round < o.rounds; round++ {
		for _, mib := range sizes {
			hmb, flat, err := reductionCost(mib<<20, 8<<10)
			if err != nil {
				return err
			}
			metric := fmt.Sprintf("ns @%d MiB", mib)
			r.add("hmbtrace HMB", metric, float64(hmb.Nanoseconds()))
			r.add("flat buffer (scan and compact)", metric, float64(flat.Nanoseconds()))
		}
	}
	r.note("8 KiB bins, depths 1..8 in equal shares: the HMB revokes the bins of depth 8, the flat buffer scans every record and compacts the rest")
	return nil
}
