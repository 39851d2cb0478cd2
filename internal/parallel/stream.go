package parallel

import (
	"io"
	"sync"
	"sync/atomic"
)

// Stream puts the outputs of the tasks of a Do into one writer, in task
// order, while the tasks run: the task whose turn it is writes straight to
// the writer; a task ahead of its turn writes into a Spool until its turn
// comes, then copies it out and goes on writing straight. A task that ends
// before its turn waits for it, so the spools number at most the workers:
// memory stays bounded (spoolMemory each), what runs far ahead goes to
// temporary files. Task i's turn comes when tasks 0..i-1 have finished
// theirs, so no task waits for a later one.
type Stream struct {
	out         io.Writer
	spoolMemory int

	next    atomic.Int64 // the task whose turn it is
	mu      sync.Mutex
	turn    *sync.Cond
	stopped bool // a task failed: the later ones write nothing more
}

// NewStream returns a stream into out whose tasks ahead of their turn
// keep up to spoolMemory bytes in memory each.
func NewStream(out io.Writer, spoolMemory int) *Stream {
	s := &Stream{out: out, spoolMemory: spoolMemory}
	s.turn = sync.NewCond(&s.mu)
	return s
}

// StreamWriter is the output of one task of a Stream. It is not safe for
// concurrent use: its task writes it.
type StreamWriter struct {
	s      *Stream
	n      int64
	spool  *Spool
	direct bool // its turn came: writes go to the stream's writer
}

// Writer returns the writer of task n; Finish must be called once the task
// is done, whether it succeeded or not.
func (s *Stream) Writer(n int) *StreamWriter {
	return &StreamWriter{s: s, n: int64(n)}
}

// Write writes p to the stream's writer if it is the task's turn, else
// to its spool.
func (w *StreamWriter) Write(p []byte) (int, error) {
	if !w.direct && w.s.next.Load() == w.n {
		if err := w.flush(); err != nil {
			return 0, err
		}
	}
	if w.direct {
		return w.s.out.Write(p)
	}
	if w.spool == nil {
		w.spool = NewSpool(w.s.spoolMemory)
	}
	return w.spool.Write(p)
}

// flush copies what the task spooled to the stream's writer, at its turn,
// and makes its writes go straight there from now on.
func (w *StreamWriter) flush() error {
	w.direct = true
	if w.spool == nil {
		return nil
	}
	_, err := w.spool.WriteTo(w.s.out)
	if cerr := w.spool.Close(); err == nil {
		err = cerr
	}
	w.spool = nil
	return err
}

// Finish waits for the task's turn, copies out what it spooled (nothing if
// failed) and passes the turn on. After a failed task, the later tasks'
// output is dropped. It returns the error of copying out.
func (w *StreamWriter) Finish(failed bool) error {
	s := w.s
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.next.Load() != w.n {
		s.turn.Wait()
	}
	var err error
	switch {
	case failed || s.stopped:
		s.stopped = true
		if w.spool != nil {
			w.spool.Close()
			w.spool = nil
		}
	case !w.direct:
		err = w.flush()
		if err != nil {
			s.stopped = true
		}
	}
	s.next.Store(w.n + 1)
	s.turn.Broadcast()
	return err
}
