package tracefile

// Story is what the buffer of one file did with the run's events: what it
// kept, filtered, removed and why, its reductions, the regions throttled,
// the messages and the usage errors. It is computed once here, and told
// by hmbtrace summary as text and by the report as tables.
type Story struct {
	Totals
	// Bins and Bytes are the bins the file holds and the bytes of their
	// records.
	Bins  int
	Bytes int64
	// KeptClasses are the classes with kept events, in class order.
	KeptClasses []ClassCount
	// Filtered is FilteredName + FilteredDuration; RemovedTotal is
	// Removed's total and RemovedBy its reasons with a count.
	Filtered     uint64
	RemovedTotal uint64
	RemovedBy    []ReasonCount
	// Balanced tells that recorded = kept + filtered + removed, as the
	// buffer counts every event it does not keep.
	Balanced bool
	// Reductions are the file's reduction steps with their times.
	Reductions []StoryReduction
	// Windows are the locations of a keep-last run with the time from
	// which they are complete; Interrupted names the locations a signal
	// ended while they recorded.
	Windows     []LocationTime
	Interrupted []string
	// Throttled are the regions switched off by HMB_THROTTLE.
	Throttled []ThrottledRegion
	Messages  MessageStory
	// UsageTotal is Usage's total, UsageKinds its kinds that happened.
	UsageTotal uint64
	UsageKinds []UsageCount
}

// ClassCount is a number of events of one class.
type ClassCount struct {
	Class Class
	N     uint64
}

// ReasonCount is a number of events removed for one reason.
type ReasonCount struct {
	Reason Reason
	N      uint64
}

// StoryReduction is a reduction step and its time in ns since the start.
type StoryReduction struct {
	Reduction
	At int64
}

// LocationTime is a location's name and a time in ns since the start.
type LocationTime struct {
	Name string
	At   int64
}

// MessageStory counts the file's messages: from the exact matrices where
// the locations have them (counted at the probe, whatever the buffer
// shed), else the message events kept, from the level statistics.
type MessageStory struct {
	// Exact is the number of locations with an exact matrix, Counted of
	// those without one that kept message events.
	Exact, Counted                           int
	Sent, SentBytes, Received, ReceivedBytes uint64
	Peers                                    int    // distinct peers of the exact matrices
	KeptEvents                               uint64 // message events kept where no matrix is
	Shed                                     uint64 // message events the buffer removed
	// Annotated counts the message-class records kept on the locations
	// of a file with annotations that have no matrix: marks and channel
	// messages, which no matrix counts (a file that has annotations keeps
	// the matrix of every location that sent a message).
	Annotated uint64
}

// Story computes the buffer's story of f.
func (f *File) Story() Story {
	s := Story{Totals: f.Totals()}
	t := &s.Totals
	s.Bins, s.Bytes = f.Bins()
	for c, v := range t.KeptByClass {
		if v > 0 {
			s.KeptClasses = append(s.KeptClasses, ClassCount{Class(c), v})
		}
	}
	s.Filtered = t.FilteredName + t.FilteredDuration
	s.RemovedTotal = t.Removed.Total()
	for r, v := range t.Removed {
		if v > 0 {
			s.RemovedBy = append(s.RemovedBy, ReasonCount{Reason(r), v})
		}
	}
	s.Balanced = t.Recorded == t.Kept+s.Filtered+s.RemovedTotal
	for _, r := range f.Reductions {
		s.Reductions = append(s.Reductions, StoryReduction{r, f.Nanos(r.Time)})
	}
	for i := range f.Locations {
		l := &f.Locations[i]
		if l.Windowed {
			s.Windows = append(s.Windows, LocationTime{l.Name, f.Nanos(l.WindowTime)})
		}
		if l.Interrupted {
			s.Interrupted = append(s.Interrupted, l.Name)
		}
	}
	s.Throttled = f.Throttled()
	s.Messages = messageStory(f)
	s.UsageTotal = t.Usage.Total()
	for _, u := range t.Usage.Counts() {
		if u.N > 0 {
			s.UsageKinds = append(s.UsageKinds, u)
		}
	}
	return s
}

// BytesPerEvent is the bytes of the records kept per event kept, 0 when
// none was.
func (s *Story) BytesPerEvent() float64 {
	if s.Kept == 0 {
		return 0
	}
	return float64(s.Bytes) / float64(s.Kept)
}

func messageStory(f *File) MessageStory {
	var m MessageStory
	peers := map[[2]uint64]bool{}
	for i := range f.Locations {
		l := &f.Locations[i]
		var events uint64
		for _, lv := range l.Levels {
			if lv.Class == ClassMessage {
				m.Shed += lv.Removed().Total()
				events += lv.Kept()
			}
		}
		switch {
		case l.Comm != nil:
			m.Exact++
			for _, c := range l.Comm {
				m.Sent += c.Sent
				m.SentBytes += c.SentBytes
				m.Received += c.Received
				m.ReceivedBytes += c.ReceivedBytes
				rank := uint64(0)
				if c.PeerRank {
					rank = 1
				}
				peers[[2]uint64{c.Peer, rank}] = true
			}
		case events > 0 && f.fileVersion() >= versionAnnotations:
			m.Annotated += events
		case events > 0:
			m.Counted++
			m.KeptEvents += events
		}
	}
	m.Peers = len(peers)
	return m
}
