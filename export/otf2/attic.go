package otf2

// Attic fields: OTF2 1.0 records carried a region type and a group type that
// later versions replaced by (role, paradigm, flags). libotf2 still writes
// the old byte, derived from the new fields. The mappings below were read off
// libotf2 3.0.2 by writing every combination of role, paradigm and flags
// (testdata/gen) and are checked against it by the golden tests.

// regionTypeAttic returns the OTF2 1.0 OTF2_RegionType for a region.
func regionTypeAttic(role RegionRole, p Paradigm, flags RegionFlags) uint8 {
	dynamic := flags&RegionFlagDynamic != 0
	phase := flags&RegionFlagPhase != 0
	switch p {
	case ParadigmUser:
		switch role {
		case RoleFunction:
			if dynamic {
				return 31 // DYNAMIC_FUNCTION
			}
			return 3 // USER_REGION
		case RoleLoop:
			switch {
			case dynamic && phase:
				return 32 // DYNAMIC_LOOP_PHASE
			case dynamic:
				return 30 // DYNAMIC_LOOP
			case phase:
				return 0
			}
			return 2 // LOOP
		case RoleCode:
			switch {
			case dynamic && phase:
				return 29 // DYNAMIC_PHASE
			case dynamic:
				return 28 // DYNAMIC
			case phase:
				return 27 // PHASE
			}
			return 1 // FUNCTION
		case RoleFileIO:
			return 4 // FILE
		}
	case ParadigmUnknown, ParadigmCompiler:
		if role == RoleFunction {
			return 1 // FUNCTION
		}
	case ParadigmOpenMP:
		if t, ok := openMPRegionTypes[role]; ok {
			return t
		}
	case ParadigmMPI:
		switch role {
		case RoleBarrier:
			return 22 // MPI_COLL_BARRIER
		case RoleCollOne2All:
			return 23
		case RoleCollAll2One:
			return 24
		case RoleCollAll2All:
			return 25
		case RoleCollOther:
			return 26
		}
	}
	return 0 // UNKNOWN
}

// openMPRegionTypes maps OpenMP roles to the OTF2 1.0 OTF2_REGION_TYPE_OMP_*.
var openMPRegionTypes = map[RegionRole]uint8{
	RoleWrapper:         19,
	RoleLoop:            6,
	RoleParallel:        5,
	RoleSections:        7,
	RoleSection:         8,
	RoleWorkshare:       9,
	RoleSingle:          10,
	RoleSingleSBlock:    18,
	RoleMaster:          11,
	RoleCritical:        12,
	RoleCriticalSBlock:  17,
	RoleAtomic:          13,
	RoleBarrier:         14,
	RoleImplicitBarrier: 15,
	RoleFlush:           16,
	RoleOrdered:         34,
	RoleOrderedSBlock:   35,
	RoleTask:            20,
	RoleTaskCreate:      33,
	RoleTaskWait:        21,
}

// groupTypeAttic returns the OTF2 1.0 OTF2_GroupTypePre12 for a group.
func groupTypeAttic(t GroupType, p Paradigm, flags GroupFlags) uint8 {
	if flags != 0 {
		return 0
	}
	switch t {
	case GroupTypeLocations, GroupTypeRegions, GroupTypeMetric:
		if p == ParadigmUnknown {
			return uint8(t) // LOCATIONS 1, REGIONS 2, METRIC 3
		}
	case GroupTypeCommLocations:
		if p == ParadigmMPI {
			return 6 // MPI_LOCATIONS
		}
	case GroupTypeCommGroup:
		if p == ParadigmMPI {
			return 4 // MPI_GROUP
		}
	case GroupTypeCommSelf:
		if p == ParadigmMPI {
			return 5 // MPI_COMM_SELF
		}
	}
	return 0
}
