package convert_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hmbtrace/hmbtrace/export/otf2"
	"github.com/hmbtrace/hmbtrace/export/otf2/convert"
	"github.com/hmbtrace/hmbtrace/export/otf2/internal/otf2print"
	"github.com/hmbtrace/hmbtrace/internal/tracetest"
	"github.com/hmbtrace/hmbtrace/measure"
	"github.com/hmbtrace/hmbtrace/tracefile"
)

// TestExportAnnotations: region parameters as ParameterInt/String events
// after their Enter, marks as values of the parameter "mark", and a
// channel with three senders and two receivers as MpiSend/MpiRecv pairs
// between the lanes that really exchanged each value, with the channel
// and token as attributes, all read back by otf2-print -Werror.
func TestExportAnnotations(t *testing.T) {
	tracetest.RequireTool(t, "otf2-print", otf2print.DebianPackage)
	const senders, receivers, each = 3, 2, 20
	dir := t.TempDir()
	m, err := measure.Start(measure.Config{Output: dir, Name: "annot"})
	if err != nil {
		t.Fatal(err)
	}
	work := m.Region("work")
	n, mode := m.IntParam("n"), m.StringParam("mode")
	jobs := m.Channel("jobs")
	type job struct {
		tok  measure.ChanToken
		from string
	}
	c := make(chan job, 4)
	var mu sync.Mutex
	pairs := map[uint64][2]string{} // token -> sending lane, receiving lane, as the program saw them
	var sg, rg sync.WaitGroup
	for s := 0; s < senders; s++ {
		name := fmt.Sprint("sender ", s)
		loc := m.Location(name)
		sg.Add(1)
		go func() {
			defer sg.Done()
			for i := 0; i < each; i++ {
				c <- job{jobs.Send(loc, 64), name}
			}
		}()
	}
	for r := 0; r < receivers; r++ {
		name := fmt.Sprint("receiver ", r)
		loc := m.Location(name)
		rg.Add(1)
		go func() {
			defer rg.Done()
			for j := range c {
				loc.EnterInt(work, n, -int64(j.tok.Number()))
				loc.ParamString(mode, "fast")
				jobs.Recv(loc, j.tok, 64)
				loc.MarkName("received")
				loc.Leave(work)
				mu.Lock()
				pairs[j.tok.Number()] = [2]string{j.from, name}
				mu.Unlock()
			}
		}()
	}
	sg.Wait()
	close(c)
	rg.Wait()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := tracefile.Open(m.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	anchor := filepath.Join(dir, "otf2")
	st, err := convert.Export(anchor, []*tracefile.File{f}, otf2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	anchor = filepath.Join(anchor, "traces.otf2")
	const msgs = senders * each
	if st.Marks != msgs || st.Parameters != 2*msgs || st.ChannelMessages != 2*msgs || st.AnnotationsLeftOut != 0 || st.MessagesWithoutPeer != 0 {
		t.Errorf("stats %+v: want %d marks, %d parameters, %d channel records", st, msgs, 2*msgs, 2*msgs)
	}
	if err := otf2print.Check(anchor); err != nil {
		t.Fatal(err)
	}
	evs, err := otf2print.Events(anchor)
	if err != nil {
		t.Fatal(err)
	}
	locName := map[uint64]string{}
	for i, l := range f.Locations {
		locName[uint64(i)] = l.Name
	}
	tokenRe := regexp.MustCompile(`\("channel" <\d+>; STRING; "jobs" <\d+>\), \("token" <\d+>; UINT64; (\d+)\)`)
	peerRe := regexp.MustCompile(`^\d+ \("([^"]+)" <\d+>\)$`)
	type end struct{ send, recv [2]string } // (this lane, the peer it names)
	seen := map[string]*end{}
	last := map[uint64]otf2print.Event{}
	var params, marks int
	for _, e := range evs {
		prev := last[e.Location]
		last[e.Location] = e
		switch e.Name {
		case "PARAMETER_INT64":
			if prev.Name != "ENTER" || !strings.HasPrefix(e.Attributes, `Parameter: "n" <`) || !strings.Contains(e.Attributes, "Value: -") {
				t.Errorf("%s after %s: %s", e.Name, prev.Name, e.Attributes)
			}
			params++
		case "PARAMETER_STRING":
			switch {
			case strings.HasPrefix(e.Attributes, `Parameter: "mode" <`):
				if prev.Name != "PARAMETER_INT64" || !strings.Contains(e.Attributes, `Value: "fast" <`) {
					t.Errorf("%s after %s: %s", e.Name, prev.Name, e.Attributes)
				}
				params++
			case strings.HasPrefix(e.Attributes, `Parameter: "mark" <`):
				if !strings.Contains(e.Attributes, `Value: "received" <`) {
					t.Errorf("mark: %s", e.Attributes)
				}
				marks++
			default:
				t.Errorf("unexpected parameter: %s", e.Attributes)
			}
		case "MPI_SEND", "MPI_RECV":
			if len(e.More) != 1 {
				t.Fatalf("%s without its attributes: %+v", e.Name, e)
			}
			tm := tokenRe.FindStringSubmatch(e.More[0])
			if tm == nil {
				t.Fatalf("%s attributes %q", e.Name, e.More[0])
			}
			key := "Receiver"
			if e.Name == "MPI_RECV" {
				key = "Sender"
			}
			v, _ := e.Field(key)
			pm := peerRe.FindStringSubmatch(v)
			if pm == nil {
				t.Fatalf("%s %s %q", e.Name, key, v)
			}
			x := seen[tm[1]]
			if x == nil {
				x = &end{}
				seen[tm[1]] = x
			}
			if e.Name == "MPI_SEND" {
				x.send = [2]string{locName[e.Location], pm[1]}
			} else {
				x.recv = [2]string{locName[e.Location], pm[1]}
			}
		}
	}
	if params != 2*msgs || marks != msgs {
		t.Errorf("otf2-print shows %d parameters and %d marks, want %d and %d", params, marks, 2*msgs, msgs)
	}
	if len(seen) != msgs {
		t.Fatalf("otf2-print shows %d channel tokens, want %d", len(seen), msgs)
	}
	// Debian's python3-otf2 (libotf2's own reader) reads the same.
	const python = "/usr/bin/python3" // python3-otf2 is built for Debian's python only
	if err := exec.Command(python, "-c", "import otf2").Run(); err != nil {
		tracetest.SkipOrFail(t, fmt.Sprintf("%s cannot import otf2 (%v): install the Debian package python3-otf2", python, err))
	}
	out, err := exec.Command(python, "-c", `
import sys, otf2
n = {}
with otf2.reader.open(sys.argv[1]) as trace:
    for loc, ev in trace.events:
        k = type(ev).__name__
        if k == "ParameterString":
            k += ":" + ev.parameter.name + "=" + ev.string
        elif k == "ParameterInt":
            k += ":" + ev.parameter.name
        elif k in ("MpiSend", "MpiRecv"):
            k += ":" + ",".join(sorted(a.name for a in ev.attributes))
        n[k] = n.get(k, 0) + 1
print(" ".join("%s=%d" % kv for kv in sorted(n.items())))
`, anchor).CombinedOutput()
	if err != nil {
		t.Fatalf("python3-otf2: %v\n%s", err, out)
	}
	wantPy := fmt.Sprintf("Enter=%[1]d Leave=%[1]d MpiRecv:channel,token=%[1]d MpiSend:channel,token=%[1]d ParameterInt:n=%[1]d ParameterString:mark=received=%[1]d ParameterString:mode=fast=%[1]d", msgs)
	if got := strings.TrimSpace(string(out)); got != wantPy {
		t.Errorf("python3-otf2 reads\n%s\nwant\n%s", got, wantPy)
	}
	for tok, x := range seen {
		var k uint64
		fmt.Sscan(tok, &k)
		want := pairs[k]
		if x.send != [2]string{want[0], want[1]} || x.recv != [2]string{want[1], want[0]} {
			t.Errorf("token %s: send on %q to %q, receive on %q from %q; the program sent it from %q to %q",
				tok, x.send[0], x.send[1], x.recv[0], x.recv[1], want[0], want[1])
		}
	}
}
