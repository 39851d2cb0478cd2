package mdcode

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestRead(t *testing.T) {
	page := "# Title\n\nRun `hmbtrace summary hmb-out` or `` a`b ``.\n\n```sh\nhmbtrace dump x.hmb\n```\n\n````md\n```\ninside\n````\ntext `HMB_ENABLE=0`\n"
	path := filepath.Join(t.TempDir(), "p.md")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, g := range got {
		s = append(s, fmt.Sprintf("%d %s %q", g.Line, g.Lang, g.Text))
	}
	want := []string{`3 inline "hmbtrace summary hmb-out"`, `3 inline "a` + "`" + `b"`, `6 sh "hmbtrace dump x.hmb"`, `10 md "` + "```" + `"`, `11 md "inside"`, `13 inline "HMB_ENABLE=0"`}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Errorf("Read:\n%q\nwant\n%q", s, want)
	}
}
