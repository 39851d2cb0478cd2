package render

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/hmbtrace/hmbtrace/analysis/comm"
	"github.com/hmbtrace/hmbtrace/internal/textname"
	"github.com/hmbtrace/hmbtrace/internal/units"
)

// CommText writes the communication matrix's totals, where its counts come
// from, and the pairs that exchange the most bytes (at most 20) as a table.
func CommText(out io.Writer, m *comm.Matrix) error {
	msgs, bytes := m.Totals()
	fmt.Fprintf(out, "%s, %s, %s, %s (counted at the sender)\n", units.Plural(len(m.Nodes), "location", "locations"),
		units.Plural(len(m.Cells), "communicating pair", "communicating pairs"), units.Plural(int(msgs), "message", "messages"), units.Plural(int(bytes), "byte", "bytes"))
	fmt.Fprint(out, countedHow(m))
	if m.Unmatched > 0 {
		fmt.Fprintf(out, "%s a peer that is not in these files\n", units.Plural(int(m.Unmatched), "message names", "messages name"))
	}
	cells := append([]comm.Cell(nil), m.Cells...)
	sort.SliceStable(cells, func(i, j int) bool { return cells[i].Bytes > cells[j].Bytes })
	if len(cells) > 20 {
		fmt.Fprintln(out, "the 20 pairs that exchange the most bytes:")
		cells = cells[:20]
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "from\tto\tmessages\tbytes\tmean size")
	for _, c := range cells {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\n", textname.Escape(m.Nodes[c.From].Name), textname.Escape(m.Nodes[c.To].Name), c.Messages, c.Bytes, float64(c.Bytes)/float64(max(c.Messages, 1)))
	}
	return tw.Flush()
}

// countedHow says where the counts come from: the files' exact matrices,
// which count the messages whose events the buffer shed, or the events
// kept, for files written before hmbtrace kept the matrix.
func countedHow(m *comm.Matrix) string {
	var b strings.Builder
	if m.Shed > 0 {
		fmt.Fprintf(&b, "the buffer shed the events of %d of these messages; the counts include them (exact, taken at the probe)\n", m.Shed)
	}
	if m.Channel > 0 {
		fmt.Fprintf(&b, "%d of these messages went through named channels: each receive paired with its send by the token its value carried, counted from the receives kept\n", m.Channel)
	}
	if m.ChannelUnreceived > 0 {
		have := "have"
		if m.ChannelUnreceived == 1 {
			have = "has"
		}
		fmt.Fprintf(&b, "%s sent on named channels %s no receive in the files (never received, or shed): not counted\n", units.Plural(int(m.ChannelUnreceived), "value", "values"), have)
	}
	if m.Counted > 0 {
		fmt.Fprintf(&b, "%d of %s counted from the events kept (their files have no exact matrix): messages the buffer shed are missing\n",
			m.Counted, units.Plural(m.Counted+m.Exact, "sender", "senders"))
	}
	return b.String()
}
