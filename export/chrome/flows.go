package chrome

// channel is one direction of messages between two locations with one
// tag; messages on it arrive in the order they were sent (MPI's
// non-overtaking rule, a Go channel's order), so the n-th send pairs with
// the n-th receive.
type channel struct {
	from, to int
	tag      uint32
}

// flowID names the n-th message of a channel, the same on the sender's and
// the receiver's side, which are written at different times: FNV-1a of the
// channel and n.
func flowID(c channel, n uint64) uint64 {
	h := uint64(14695981039346656037)
	for _, v := range [4]uint64{uint64(c.from), uint64(c.to), uint64(c.tag), n} {
		for k := 0; k < 8; k++ {
			h ^= (v >> (8 * k)) & 0xFF
			h *= 1099511628211
		}
	}
	return h
}
