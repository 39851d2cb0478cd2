package cube

import (
	"archive/tar"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// The markers and header of cubelib's binary files (cubew_metric.h): an
// index file is its marker, the endianness word 1 as the writer's machine
// stores it (little endian here), a format version (0) and the index
// format; a dense index ends there. A data file is its marker followed by
// one row per call path, in the metric's cnode order, of one value per
// location in location-id order.
const (
	indexMarker = "CUBEX.INDEX"
	dataMarker  = "CUBEX.DATA"
	indexDense  = 3 // CUBE_INDEX_FORMAT_DENSE
	anchorName  = "anchor.xml"
	// anchorVersion is the anchor syntax cubew writes without GPU
	// locations (CUBE_ANCHOR_BASIC_VERSION).
	anchorVersion = "4.4"
)

// Write writes the profile to w as a .cubex archive: anchor.xml, then
// N.index and N.data for each metric N in metric-id order. Every metric is
// EXCLUSIVE: its rows are its call paths in preorder (depth first), which
// is the order cubelib reads an exclusive metric's rows in.
func (p *Profile) Write(w io.Writer) error {
	if err := p.check(); err != nil {
		return err
	}
	metrics := p.MetricList()
	cnodes := p.Cnodes()
	locs := p.Locations()
	cpos := make([]int32, p.ncn) // creation id -> row
	for i, c := range cnodes {
		cpos[c.id] = int32(i)
	}
	lpos := make([]int32, p.nlocs) // creation id -> column
	for i := range lpos {
		lpos[i] = -1
	}
	for i, l := range locs {
		lpos[l.id] = int32(i)
	}
	tw := tar.NewWriter(w)
	now := time.Unix(0, 0)
	if !p.Time.IsZero() && p.Time.After(now) {
		now = p.Time.Truncate(time.Second)
	}
	put := func(name string, b []byte) error {
		// USTAR, as cubew writes: cubelib's tar reader knows no PAX or
		// GNU extensions, which Go would otherwise pick for long names.
		h := &tar.Header{Name: name, Mode: 0o600, Size: int64(len(b)), ModTime: now, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("cube: %s: %w", name, err)
		}
		if _, err := tw.Write(b); err != nil {
			return fmt.Errorf("cube: %s: %w", name, err)
		}
		return nil
	}
	if err := put(anchorName, padAnchor(p.anchor(metrics, cnodes, locs))); err != nil {
		return err
	}
	var index bytes.Buffer
	index.WriteString(indexMarker)
	index.Write(binary.LittleEndian.AppendUint32(nil, 1))
	index.Write([]byte{0, 0}) // version
	index.WriteByte(indexDense)
	row := len(locs)
	for id, m := range metrics {
		data := make([]byte, len(dataMarker)+8*row*len(cnodes))
		copy(data, dataMarker)
		for k, v := range m.vals {
			col := lpos[k.loc]
			if col < 0 || int(k.cnode) >= len(cpos) {
				return fmt.Errorf("cube: metric %s has a value at a location or call path of another profile", m.Uniq)
			}
			at := len(dataMarker) + 8*(int(cpos[k.cnode])*row+int(col))
			if m.Type == Uint64 {
				binary.LittleEndian.PutUint64(data[at:], uint64(v))
			} else {
				binary.LittleEndian.PutUint64(data[at:], math.Float64bits(v))
			}
		}
		if err := put(strconv.Itoa(id)+".index", index.Bytes()); err != nil {
			return err
		}
		if err := put(strconv.Itoa(id)+".data", data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("cube: %w", err)
	}
	return nil
}

// anchor returns anchor.xml as cubew writes it (cubew_cube.c).
func (p *Profile) anchor(metrics []*Metric, cnodes []*Cnode, locs []*Location) []byte {
	var b bytes.Buffer
	esc := xmlEscape
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<cube version=\"%s\">\n", anchorVersion)
	fmt.Fprintf(&b, "<attr key=\"CubePL Version\" value=\"1.1\"/>\n<attr key=\"Cube anchor.xml syntax version\" value=\"%s\"/>\n", anchorVersion)
	for _, a := range p.Attrs {
		fmt.Fprintf(&b, "<attr key=\"%s\" value=\"%s\"/>\n", esc(a[0]), esc(a[1]))
	}
	b.WriteString("<doc>\n<mirrors>\n</mirrors>\n</doc>\n<metrics>\n")
	mid := map[*Metric]int{}
	for i, m := range metrics {
		mid[m] = i
	}
	var metric func(m *Metric)
	metric = func(m *Metric) {
		fmt.Fprintf(&b, "<metric id=\"%d\" type=\"EXCLUSIVE\">\n<disp_name>%s</disp_name>\n<uniq_name>%s</uniq_name>\n<dtype>%s</dtype>\n<uom>%s</uom>\n<url>%s</url>\n<descr>%s</descr>\n",
			mid[m], esc(m.Display), esc(m.Uniq), m.Type, esc(m.Unit), esc(m.URL), esc(m.Descr))
		for _, c := range m.Children {
			metric(c)
		}
		b.WriteString("</metric>\n")
	}
	for _, m := range p.metrics {
		metric(m)
	}
	b.WriteString("</metrics>\n<program>\n")
	for _, r := range p.regions {
		fmt.Fprintf(&b, "<region id=\"%d\" mod=\"%s\" begin=\"%d\" end=\"%d\">\n<name>%s</name>\n<paradigm>%s</paradigm>\n<role>%s</role>\n<url></url>\n<descr></descr>\n</region>\n",
			r.id, esc(r.Mod), r.Begin, r.End, esc(r.Name), esc(r.Paradigm), esc(r.Role))
	}
	cid := make(map[*Cnode]int, len(cnodes))
	for i, c := range cnodes {
		cid[c] = i
	}
	var cnode func(c *Cnode)
	cnode = func(c *Cnode) {
		fmt.Fprintf(&b, "<cnode id=\"%d\" calleeId=\"%d\">\n", cid[c], c.Region.id)
		for _, k := range c.Children {
			cnode(k)
		}
		b.WriteString("</cnode>\n")
	}
	for _, c := range p.roots {
		cnode(c)
	}
	b.WriteString("</program>\n<system>\n")
	stn, lg, loc := 0, 0, 0
	for _, m := range p.machines {
		fmt.Fprintf(&b, "<systemtreenode Id=\"%d\">\n<name>%s</name>\n<class>machine</class>\n", stn, esc(m.Name))
		stn++
		for _, n := range m.Nodes {
			fmt.Fprintf(&b, "<systemtreenode Id=\"%d\">\n<name>%s</name>\n<class>node</class>\n", stn, esc(n.Name))
			stn++
			for _, pr := range n.Processes {
				fmt.Fprintf(&b, "<locationgroup Id=\"%d\">\n<name>%s</name>\n<rank>%d</rank>\n<type>process</type>\n", lg, esc(pr.Name), pr.Rank)
				lg++
				for _, l := range pr.Locations {
					fmt.Fprintf(&b, "<location Id=\"%d\">\n<name>%s</name>\n<rank>%d</rank>\n<type>thread</type>\n</location>\n", loc, esc(l.Name), l.Rank)
					loc++
				}
				b.WriteString("</locationgroup>\n")
			}
			b.WriteString("</systemtreenode>\n")
		}
		b.WriteString("</systemtreenode>\n")
	}
	b.WriteString("<topologies>\n</topologies>\n</system>\n</cube>\n")
	return b.Bytes()
}

// padAnchor keeps the anchor's size off multiples of 512. cubelib's tar
// reader (CubeTarReader.cpp) takes a member of n bytes to fill n/512+1
// blocks, one more than tar pads a member of k·512 bytes to, and would
// read the next member from the wrong place; cubew pads such a member
// with a block of zeros, which standard tar readers take for the end of
// the archive. A newline after the XML satisfies both. The index (18
// bytes) and data files (10 + 8·n bytes) are never such a size.
func padAnchor(b []byte) []byte {
	if len(b)%512 == 0 {
		b = append(b, '\n')
	}
	return b
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&quot;", "'", "&apos;")

// xmlEscape escapes s for the anchor, whose parser reads the five
// predefined entities; control characters other than tab and newline,
// which XML 1.0 forbids, become U+FFFD.
func xmlEscape(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
			return '\uFFFD'
		}
		return r
	}, s)
	return xmlEscaper.Replace(s)
}
