package cube

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/hmbtrace/hmbtrace/tracefile"
)

// lateSenderPath is where Scalasca's metric tree puts Late Sender.
const lateSenderPath = "Time > MPI > Communication > Point-to-point > Late Sender"

// waitProfile is the ring's profile with a Late Sender wait of 100 ns in
// rank 1's MPI_Recv (planted here as the wait-state analysis would book
// it) and an empty Wait at N x N beside it.
func waitProfile(t testing.TB, files []*tracefile.File) *Profile {
	t.Helper()
	p, err := FromFiles(files, 1)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := p.MetricPath(lateSenderPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.MetricPath("Time > MPI > Communication > Collective > Wait at N x N"); err != nil {
		t.Fatal(err)
	}
	recv := p.FindCall("main", "MPI_Recv")
	ls.Add(recv, p.FileLocation(1, 0), 100e-9)
	return p
}

// shape is a profile as the tests compare it: its trees, one line per
// node with its depth, and its nonzero values by (metric, call path,
// location), call paths and locations by their preorder numbers.
type shape struct {
	metrics, cnodes, system []string
	values                  map[string]float64
}

func shapeOf(p *Profile) shape {
	s := shape{values: map[string]float64{}}
	var metric func(m *Metric, depth int)
	metric = func(m *Metric, depth int) {
		s.metrics = append(s.metrics, fmt.Sprintf("%d %s %s %s %s", depth, m.Uniq, m.Display, m.Unit, m.Type))
		for _, c := range m.Children {
			metric(c, depth+1)
		}
	}
	for _, m := range p.Metrics() {
		metric(m, 0)
	}
	cnodes := p.Cnodes()
	for _, c := range cnodes {
		depth := 0
		for a := c.Parent; a != nil; a = a.Parent {
			depth++
		}
		r := c.Region
		s.cnodes = append(s.cnodes, fmt.Sprintf("%d %s %d %d paradigm=%s role=%s mod=%s", depth, r.Name, r.Begin, r.End, r.Paradigm, r.Role, r.Mod))
	}
	for _, m := range p.Machines() {
		s.system = append(s.system, "machine "+m.Name)
		for _, n := range m.Nodes {
			s.system = append(s.system, "node "+n.Name)
			for _, pr := range n.Processes {
				s.system = append(s.system, fmt.Sprintf("process %s rank=%d", pr.Name, pr.Rank))
				for _, l := range pr.Locations {
					s.system = append(s.system, fmt.Sprintf("thread %s rank=%d", l.Name, l.Rank))
				}
			}
		}
	}
	locs := p.Locations()
	for _, m := range p.MetricList() {
		for i, c := range cnodes {
			for j, l := range locs {
				if v := m.Value(c, l); v != 0 {
					s.values[fmt.Sprintf("%s %d %d", m.Uniq, i, j)] = v
				}
			}
		}
	}
	return s
}

// compare reports how got differs from want; values agree to rel, the
// precision of the text they were printed as.
func (want shape) compare(t *testing.T, got shape, rel float64) {
	t.Helper()
	lists := []struct {
		name      string
		want, got []string
	}{{"metric tree", want.metrics, got.metrics}, {"call tree", want.cnodes, got.cnodes}, {"system tree", want.system, got.system}}
	for _, l := range lists {
		if strings.Join(l.want, "\n") != strings.Join(l.got, "\n") {
			t.Errorf("%s:\n%s\nwant:\n%s", l.name, strings.Join(l.got, "\n"), strings.Join(l.want, "\n"))
		}
	}
	for k, w := range want.values {
		if g := got.values[k]; math.Abs(g-w) > rel*math.Abs(w) {
			t.Errorf("value %s = %g, want %g", k, g, w)
		}
	}
	for k, g := range got.values {
		if _, ok := want.values[k]; !ok {
			t.Errorf("value %s = %g, want none", k, g)
		}
	}
}

func TestWriteRead(t *testing.T) {
	p := waitProfile(t, ring(t))
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	toolCheck(t, b.Bytes())
	q, err := Read(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	shapeOf(p).compare(t, shapeOf(q), 0)
	// A read profile takes more values at its call paths.
	main := q.Call(nil, q.Regions()[0])
	if main != q.Cnodes()[0] {
		t.Errorf("Call of a read profile made a new call path")
	}
	if len(q.Attrs) != len(p.Attrs) || q.Attrs[0] != p.Attrs[0] {
		t.Errorf("attributes %q, want %q", q.Attrs, p.Attrs)
	}
	// The members, in cubew's names and order after the anchor.
	var names []string
	tr := tar.NewReader(bytes.NewReader(b.Bytes()))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Format != tar.FormatUSTAR && h.Format != tar.FormatUnknown {
			t.Errorf("%s: tar format %v, want USTAR", h.Name, h.Format)
		}
		names = append(names, h.Name)
	}
	if got := strings.Join(names, " "); !strings.HasPrefix(got, "anchor.xml 0.index 0.data 1.index 1.data 2.index") ||
		len(names) != 1+2*len(p.MetricList()) {
		t.Errorf("members %s", got)
	}
}

// Time and the MPI metrics hold the receive's whole time, Late Sender the
// wait; a wait longer than its call is refused.
func TestSubMetrics(t *testing.T) {
	p := waitProfile(t, ring(t))
	cn, locs := p.Cnodes(), p.Locations()
	recv, send := cn[3], cn[2]
	for _, uniq := range []string{"time", "mpi", "comm", "mpi_point2point"} {
		if got := p.Metric(uniq).Value(recv, locs[2]); got != 400e-9 {
			t.Errorf("%s at MPI_Recv = %g, want 400 ns", uniq, got)
		}
		if got := p.Metric(uniq).Value(send, locs[0]); got != 400e-9 {
			t.Errorf("%s at MPI_Send = %g, want 400 ns", uniq, got)
		}
	}
	ls := p.Metric("mpi_latesender")
	if got := ls.Value(recv, locs[2]); got != 100e-9 {
		t.Errorf("Late Sender = %g, want 100 ns", got)
	}
	if got := p.Metric("mpi").Value(cn[0], locs[0]); got != 0 {
		t.Errorf("MPI at main = %g, want 0", got)
	}
	if p.Metric("mpi_collective") == nil || p.Metric("mpi_wait_nxn") == nil {
		t.Error("no Collective > Wait at N x N")
	}
	ls.Add(recv, locs[2], 400e-9)
	if err := p.Write(io.Discard); err == nil || !strings.Contains(err.Error(), `sub-metrics of mpi_point2point add up to 5e-07 at call path main/MPI_Recv, location "main" of "rank 1"`) {
		t.Errorf("a wait longer than its call: %v", err)
	}
}

func TestFind(t *testing.T) {
	p, err := FromFiles(ring(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := p.FindCall("main", "MPI_Recv"); c == nil || c != p.Cnodes()[3] {
		t.Errorf("FindCall(main, MPI_Recv) = %v", c)
	}
	if c := p.FindCall("main", "nothing"); c != nil {
		t.Errorf("FindCall of a path not called: %v", c)
	}
	if l := p.FileLocation(1, 1); l == nil || l != p.Locations()[3] {
		t.Errorf("FileLocation(1, 1) = %v", l)
	}
	if l := p.FileLocation(2, 0); l != nil {
		t.Errorf("FileLocation of a third file: %v", l)
	}
}

func TestMPIClass(t *testing.T) {
	for name, want := range map[string]string{
		"MPI_Recv": PathP2P, "MPI_Isend": PathP2P, "MPI_Waitall": PathP2P, "MPI_Sendrecv": PathP2P, "MPI_Iprobe": PathP2P,
		"MPI_Allreduce": PathCollective, "MPI_Ireduce_scatter_block": PathCollective, "MPI_Bcast": PathCollective, "MPI_Alltoallv": PathCollective,
		"MPI_Barrier": PathMPIBarrier, "MPI_Ibarrier": PathMPIBarrier,
		"MPI_Init": PathMPI, "MPI_Comm_split": PathMPI, "MPI_Finalize": PathMPI,
	} {
		if got := mpiClass(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

func TestMetricPath(t *testing.T) {
	p := NewProfile()
	a, err := p.MetricPath(lateSenderPath)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MetricPath("Time>MPI>Communication>Point-to-point>Late Sender")
	if err != nil || a != b {
		t.Errorf("the same path twice: %p %p %v", a, b, err)
	}
	if a.Uniq != "mpi_latesender" || a.Parent.Uniq != "mpi_point2point" || a.Unit != "sec" || a.Type != Double {
		t.Errorf("Late Sender: %+v", a)
	}
	// Names Scalasca does not have are made of the display name; a taken
	// one gets a number.
	c, err := p.MetricPath("Time > Late Sender > Late Sender")
	if err != nil || c.Uniq != "late_sender_2" || c.Parent.Uniq != "late_sender" {
		t.Errorf("second Late Sender: %+v %v", c, err)
	}
	if _, err := p.MetricPath("Time >> x"); err == nil {
		t.Error("empty name in a path: no error")
	}
	if _, err := p.AddMetric(nil, "time", "Time", "sec", Double, ""); err == nil {
		t.Error("unique name twice: no error")
	}
}

func TestWriteErrors(t *testing.T) {
	for name, build := range map[string]func(p *Profile){
		"no metric": func(p *Profile) {},
		"no call path": func(p *Profile) {
			p.AddMetric(nil, "time", "Time", "sec", Double, "")
		},
		"no location": func(p *Profile) {
			p.AddMetric(nil, "time", "Time", "sec", Double, "")
			p.Call(nil, p.Region("main", "m.c", 1, 1, "user", "function"))
		},
		"NaN": func(p *Profile) {
			m, _ := p.AddMetric(nil, "time", "Time", "sec", Double, "")
			c := p.Call(nil, p.Region("main", "m.c", 1, 1, "user", "function"))
			l := p.AddLocation(p.AddMachine("m").Node("n").AddProcess("rank 0", 0), "main", 0)
			m.Add(c, l, math.NaN())
		},
		"negative count": func(p *Profile) {
			m, _ := p.AddMetric(nil, "visits", "Visits", "occ", Uint64, "")
			c := p.Call(nil, p.Region("main", "m.c", 1, 1, "user", "function"))
			l := p.AddLocation(p.AddMachine("m").Node("n").AddProcess("rank 0", 0), "main", 0)
			m.Add(c, l, -1)
		},
	} {
		p := NewProfile()
		build(p)
		if err := p.Write(io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// Names with XML's special characters and control characters come back
// as written (control characters as U+FFFD).
func TestWriteEscapes(t *testing.T) {
	p := NewProfile()
	m, _ := p.AddMetric(nil, "time", `Time <"&'>`, "sec", Double, "a & b")
	c := p.Call(nil, p.Region("operator<<(A&, \"B\")", "x<y>.cc", 3, 4, "user", "function"))
	l := p.AddLocation(p.AddMachine("m&m").Node("n<1>").AddProcess("rank 0", 0), "thread\x01", 0)
	m.Add(c, l, 2.5)
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	toolCheck(t, b.Bytes())
	q, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Metrics()[0].Display; got != `Time <"&'>` {
		t.Errorf("metric name %q", got)
	}
	if r := q.Regions()[0]; r.Name != "operator<<(A&, \"B\")" || r.Mod != "x<y>.cc" {
		t.Errorf("region %+v", r)
	}
	if got := q.Locations()[0].Name; got != "thread\uFFFD" {
		t.Errorf("location name %q", got)
	}
	if got := q.Metrics()[0].Value(q.Cnodes()[0], q.Locations()[0]); got != 2.5 {
		t.Errorf("value %g", got)
	}
}

func TestReadErrors(t *testing.T) {
	var good bytes.Buffer
	if err := ExportProcs(&good, ring(t), 1); err != nil { // Time and Visits
		t.Fatal(err)
	}
	var order []string
	members := func() map[string][]byte {
		out := map[string][]byte{}
		tr := tar.NewReader(bytes.NewReader(good.Bytes()))
		for {
			h, err := tr.Next()
			if err != nil {
				return out
			}
			b, _ := io.ReadAll(tr)
			out[h.Name] = b
			order = append(order, h.Name)
		}
	}
	archive := func(m map[string][]byte) []byte {
		var b bytes.Buffer
		tw := tar.NewWriter(&b)
		for _, name := range order {
			if d, ok := m[name]; ok {
				tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: int64(len(d))})
				tw.Write(d)
			}
		}
		tw.Close()
		return b.Bytes()
	}
	simple := members()
	if _, err := Read(bytes.NewReader(archive(simple))); err != nil {
		t.Fatalf("the archive as written: %v", err)
	}
	for name, change := range map[string]func(m map[string][]byte){
		"no anchor":  func(m map[string][]byte) { delete(m, "anchor.xml") },
		"no data":    func(m map[string][]byte) { delete(m, "1.data") },
		"no index":   func(m map[string][]byte) { delete(m, "0.index") },
		"bad marker": func(m map[string][]byte) { m["0.index"] = []byte("CUBEX.INDEY\x01\x00\x00\x00\x00\x00\x03") },
		"sparse": func(m map[string][]byte) {
			m["0.index"] = []byte("CUBEX.INDEX\x01\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00")
		},
		"big endian": func(m map[string][]byte) { m["0.index"] = []byte("CUBEX.INDEX\x00\x00\x00\x01\x00\x00\x03") },
		"compressed": func(m map[string][]byte) { m["0.data"] = append([]byte("Z"), m["0.data"]...) },
		"short data": func(m map[string][]byte) { m["0.data"] = m["0.data"][:len(m["0.data"])-8] },
		"bad xml":    func(m map[string][]byte) { m["anchor.xml"] = m["anchor.xml"][:100] },
		"inclusive": func(m map[string][]byte) {
			m["anchor.xml"] = bytes.Replace(m["anchor.xml"], []byte(`"EXCLUSIVE"`), []byte(`"INCLUSIVE"`), 1)
		},
		"unknown calle": func(m map[string][]byte) {
			m["anchor.xml"] = bytes.Replace(m["anchor.xml"], []byte(`calleeId="0"`), []byte(`calleeId="99"`), 1)
		},
	} {
		m := map[string][]byte{}
		for k, v := range simple {
			m[k] = bytes.Clone(v)
		}
		change(m)
		if _, err := Read(bytes.NewReader(archive(m))); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.HasPrefix(err.Error(), "cube: ") {
			t.Errorf("%s: error %q does not say it is the cube reader's", name, err)
		}
	}
	if _, err := Read(strings.NewReader("not a tar file, long enough to fill a header block? no")); err == nil {
		t.Error("not a tar file: no error")
	}
}

// An anchor of k·512 bytes gets a newline: cubelib's tar reader would take
// it for k+1 blocks.
func TestAnchorOffBlockSize(t *testing.T) {
	p := waitProfile(t, ring(t))
	p.Attrs = append(p.Attrs, [2]string{"pad", ""})
	n := len(p.anchor(p.MetricList(), p.Cnodes(), p.Locations()))
	p.Attrs[len(p.Attrs)-1][1] = strings.Repeat("x", 512-n%512)
	if n := len(p.anchor(p.MetricList(), p.Cnodes(), p.Locations())); n%512 != 0 {
		t.Fatalf("anchor of %d bytes: the test wants a multiple of 512", n)
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(b.Bytes()))
	h, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if h.Name != "anchor.xml" || h.Size%512 == 0 {
		t.Errorf("%s of %d bytes", h.Name, h.Size)
	}
	toolCheck(t, b.Bytes())
	if _, err := Read(bytes.NewReader(b.Bytes())); err != nil {
		t.Error(err)
	}
}
