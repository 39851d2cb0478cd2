package tracefile

import (
	"fmt"

	"github.com/hmbtrace/hmbtrace/internal/wirecodec"
)

// The THREAD TEAMS section (0x25) holds the place of each OpenMP thread in
// its teams, for the locations that are OpenMP threads: the location id,
// then its thread number in each enclosing team from the outermost in.
// Written only when a location has one; files without it read as before.
const secTeams = 0x25

// MaxTeamLevels bounds the nesting levels a location's Team records.
const MaxTeamLevels = 64

func init() { sectionNames[secTeams] = "THREAD TEAMS" }

// encodeTeams returns the THREAD TEAMS section's payload, nil if no location
// is an OpenMP thread.
func encodeTeams(ls []Location) []byte {
	n := 0
	for i := range ls {
		if len(ls[i].Team) > 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	var p wirecodec.Writer
	p.Uvarint(uint64(n))
	for i := range ls {
		l := &ls[i]
		if len(l.Team) == 0 {
			continue
		}
		team := l.Team[:min(len(l.Team), MaxTeamLevels)]
		p.Uvarint(uint64(l.ID))
		p.Uvarint(uint64(len(team)))
		for _, t := range team {
			p.Uvarint(uint64(t))
		}
	}
	return p
}

// decodeTeams reads the THREAD TEAMS section into the locations, which the
// LOCATIONS section defined before.
func (tf *File) decodeTeams(f *fields) {
	n := f.Count("thread teams", 2)
	for i := 0; i < n && f.OK(); i++ {
		id := f.U32("team location")
		li, ok := tf.locIdx[id]
		if f.OK() && !ok {
			f.Fail("team location", fmt.Sprintf("location %d is not defined", id))
			return
		}
		levels := f.Count("nesting levels", 1)
		if f.OK() && (levels == 0 || levels > MaxTeamLevels) {
			f.Fail("nesting levels", fmt.Sprintf("%d levels (1 to %d)", levels, MaxTeamLevels))
			return
		}
		if f.OK() && tf.Locations[li].Team != nil {
			f.Fail("team location", fmt.Sprintf("location %d has two places", id))
			return
		}
		team := make([]int, levels)
		for k := range team {
			team[k] = int(f.U32("thread number"))
		}
		tf.Locations[li].Team = team
	}
}

// TeamLabel describes an OpenMP thread's place for a reader: "level 2,
// thread 3 of a team forked by thread 1", or "" for a location that is not one.
func (l *Location) TeamLabel() string {
	switch len(l.Team) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("level 1, thread %d", l.Team[0])
	}
	forker := fmt.Sprint(l.Team[0])
	for _, t := range l.Team[1 : len(l.Team)-1] {
		forker += fmt.Sprintf(":%d", t)
	}
	return fmt.Sprintf("level %d, thread %d of a team forked by thread %s", len(l.Team), l.Team[len(l.Team)-1], forker)
}
