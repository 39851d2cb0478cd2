package cube

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// The anchor as encoding/xml reads it.
type xAnchor struct {
	Version string    `xml:"version,attr"`
	Attrs   []xAttr   `xml:"attr"`
	Metrics []xMetric `xml:"metrics>metric"`
	Regions []xRegion `xml:"program>region"`
	Cnodes  []xCnode  `xml:"program>cnode"`
	System  []xSTN    `xml:"system>systemtreenode"`
}

type xAttr struct {
	Key   string `xml:"key,attr"`
	Value string `xml:"value,attr"`
}

type xMetric struct {
	ID       int       `xml:"id,attr"`
	Type     string    `xml:"type,attr"`
	Display  string    `xml:"disp_name"`
	Uniq     string    `xml:"uniq_name"`
	DType    string    `xml:"dtype"`
	Unit     string    `xml:"uom"`
	URL      string    `xml:"url"`
	Descr    string    `xml:"descr"`
	Children []xMetric `xml:"metric"`
}

type xRegion struct {
	ID       int    `xml:"id,attr"`
	Mod      string `xml:"mod,attr"`
	Begin    int    `xml:"begin,attr"`
	End      int    `xml:"end,attr"`
	Name     string `xml:"name"`
	Paradigm string `xml:"paradigm"`
	Role     string `xml:"role"`
}

type xCnode struct {
	ID       int      `xml:"id,attr"`
	Callee   int      `xml:"calleeId,attr"`
	Children []xCnode `xml:"cnode"`
}

type xSTN struct {
	Name     string   `xml:"name"`
	Class    string   `xml:"class"`
	Groups   []xGroup `xml:"locationgroup"`
	Children []xSTN   `xml:"systemtreenode"`
}

type xGroup struct {
	Name      string `xml:"name"`
	Rank      int    `xml:"rank"`
	Type      string `xml:"type"`
	Locations []struct {
		Name string `xml:"name"`
		Rank int    `xml:"rank"`
	} `xml:"location"`
}

// Read reads a .cubex archive: the anchor and, for every metric, its dense
// index and data files. It reads what Write writes and what cubelib writes
// uncompressed with a dense index for EXCLUSIVE metrics over a system tree
// of machine → node → process → thread; anything else is an error saying
// what it is.
func Read(r io.Reader) (*Profile, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("cube: reading the archive: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(tr, 1<<32))
		if err != nil {
			return nil, fmt.Errorf("cube: reading %s: %w", h.Name, err)
		}
		files[h.Name] = b
	}
	raw, ok := files[anchorName]
	if !ok {
		return nil, errors.New("cube: the archive has no anchor.xml")
	}
	var a xAnchor
	if err := xml.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("cube: anchor.xml: %w", err)
	}
	p := NewProfile()
	for _, at := range a.Attrs {
		switch at.Key {
		case "CubePL Version", "Cube anchor.xml syntax version", "Cube Version":
		default:
			p.Attrs = append(p.Attrs, [2]string{at.Key, at.Value})
		}
	}
	ids := map[*Metric]int{}
	var addMetric func(parent *Metric, x xMetric) error
	addMetric = func(parent *Metric, x xMetric) error {
		if x.Type != "EXCLUSIVE" {
			return fmt.Errorf("cube: metric %q is %s: this reader reads EXCLUSIVE metrics", x.Uniq, x.Type)
		}
		t := Double
		switch x.DType {
		case "DOUBLE":
		case "UINT64":
			t = Uint64
		default:
			return fmt.Errorf("cube: metric %q has type %s: this reader reads DOUBLE and UINT64", x.Uniq, x.DType)
		}
		m, err := p.AddMetric(parent, x.Uniq, x.Display, x.Unit, t, x.Descr)
		if err != nil {
			return err
		}
		m.URL = x.URL
		ids[m] = x.ID
		for _, c := range x.Children {
			if err := addMetric(m, c); err != nil {
				return err
			}
		}
		return nil
	}
	for _, x := range a.Metrics {
		if err := addMetric(nil, x); err != nil {
			return nil, err
		}
	}
	regions := map[int]*Region{}
	for _, x := range a.Regions {
		if regions[x.ID] != nil {
			return nil, fmt.Errorf("cube: region id %d defined twice", x.ID)
		}
		r := &Region{Name: x.Name, Mod: x.Mod, Begin: x.Begin, End: x.End, Paradigm: x.Paradigm, Role: x.Role, id: len(p.regions)}
		p.regions = append(p.regions, r)
		p.regionBy[regionKey{r.Name, r.Mod}] = r
		regions[x.ID] = r
	}
	var addCnode func(parent *Cnode, x xCnode) error
	addCnode = func(parent *Cnode, x xCnode) error {
		r := regions[x.Callee]
		if r == nil {
			return fmt.Errorf("cube: cnode %d calls region %d, which is not defined", x.ID, x.Callee)
		}
		// Two cnodes may call the same region under one parent in a file
		// of another writer: keep them apart, as the rows do.
		c := &Cnode{Region: r, Parent: parent, id: p.ncn}
		p.ncn++
		if parent == nil {
			p.roots = append(p.roots, c)
		} else {
			parent.Children = append(parent.Children, c)
		}
		// Call finds the first of them.
		up := parent
		if up == nil {
			if p.top == nil {
				p.top = &Cnode{}
			}
			up = p.top
		}
		if up.byRegion == nil {
			up.byRegion = map[*Region]*Cnode{}
		}
		if up.byRegion[r] == nil {
			up.byRegion[r] = c
		}
		for _, k := range x.Children {
			if err := addCnode(c, k); err != nil {
				return err
			}
		}
		return nil
	}
	for _, x := range a.Cnodes {
		if err := addCnode(nil, x); err != nil {
			return nil, err
		}
	}
	for _, x := range a.System {
		if x.Class != "machine" || len(x.Groups) > 0 {
			return nil, fmt.Errorf("cube: system tree root %q is a %q with %d processes: this reader reads machine → node → process → thread", x.Name, x.Class, len(x.Groups))
		}
		m := p.AddMachine(x.Name)
		for _, y := range x.Children {
			if len(y.Children) > 0 {
				return nil, fmt.Errorf("cube: node %q has system tree nodes under it: this reader reads machine → node → process → thread", y.Name)
			}
			n := &Node{Name: y.Name}
			m.Nodes = append(m.Nodes, n)
			for _, g := range y.Groups {
				pr := n.AddProcess(g.Name, g.Rank)
				for _, l := range g.Locations {
					p.AddLocation(pr, l.Name, l.Rank)
				}
			}
		}
	}
	cnodes := p.Cnodes()
	locs := p.Locations()
	for _, m := range p.MetricList() {
		id := strconv.Itoa(ids[m])
		idx, ok := files[id+".index"]
		if !ok {
			return nil, fmt.Errorf("cube: metric %s has no %s.index", m.Uniq, id)
		}
		data, ok := files[id+".data"]
		if !ok {
			return nil, fmt.Errorf("cube: metric %s has no %s.data", m.Uniq, id)
		}
		if err := checkIndex(idx); err != nil {
			return nil, fmt.Errorf("cube: %s.index: %w", id, err)
		}
		if !bytes.HasPrefix(data, []byte(dataMarker)) {
			return nil, fmt.Errorf("cube: %s.data does not start with %s (compressed data is not read)", id, dataMarker)
		}
		data = data[len(dataMarker):]
		if want := 8 * len(cnodes) * len(locs); len(data) != want {
			return nil, fmt.Errorf("cube: %s.data holds %d bytes of values, want %d (%d call paths × %d locations × 8)", id, len(data), want, len(cnodes), len(locs))
		}
		for i, c := range cnodes {
			for j, l := range locs {
				u := binary.LittleEndian.Uint64(data[8*(i*len(locs)+j):])
				v := math.Float64frombits(u)
				if m.Type == Uint64 {
					v = float64(u)
				}
				if v != 0 {
					m.vals[cell{int32(c.id), int32(l.id)}] = v
				}
			}
		}
	}
	return p, nil
}

// checkIndex accepts a dense little-endian index as Write and cubew write.
func checkIndex(b []byte) error {
	if !bytes.HasPrefix(b, []byte(indexMarker)) {
		return fmt.Errorf("does not start with %s", indexMarker)
	}
	b = b[len(indexMarker):]
	if len(b) < 7 {
		return errors.New("header cut short")
	}
	if e := binary.LittleEndian.Uint32(b); e != 1 {
		return fmt.Errorf("endianness word %#x: this reader reads little-endian files", e)
	}
	if b[6] != indexDense {
		return fmt.Errorf("index format %d: this reader reads dense indices (%d)", b[6], indexDense)
	}
	return nil
}
