package otf2

// The enumerations below carry OTF2's numeric values, so that they can be
// stored as they are and compared with libotf2 headers and otf2-print output.

// RegionRole is OTF2_RegionRole: what kind of code a region is.
type RegionRole uint8

// Region roles (OTF2_REGION_ROLE_*).
const (
	RoleUnknown RegionRole = iota
	RoleFunction
	RoleWrapper
	RoleLoop
	RoleCode
	RoleParallel
	RoleSections
	RoleSection
	RoleWorkshare
	RoleSingle
	RoleSingleSBlock
	RoleMaster
	RoleCritical
	RoleCriticalSBlock
	RoleAtomic
	RoleBarrier
	RoleImplicitBarrier
	RoleFlush
	RoleOrdered
	RoleOrderedSBlock
	RoleTask
	RoleTaskCreate
	RoleTaskWait
	RoleCollOne2All
	RoleCollAll2One
	RoleCollAll2All
	RoleCollOther
	RoleFileIO
	RolePoint2Point
	RoleRMA
	RoleDataTransfer
	RoleArtificial
	RoleThreadCreate
	RoleThreadWait
	RoleTaskUntied
	RoleAllocate
	RoleDeallocate
	RoleReallocate
	RoleFileIOMetadata
)

// Paradigm is OTF2_Paradigm: the programming model a region or group
// belongs to.
type Paradigm uint8

// Paradigms (OTF2_PARADIGM_*).
const (
	ParadigmUnknown Paradigm = iota
	ParadigmUser
	ParadigmCompiler
	ParadigmOpenMP
	ParadigmMPI
	ParadigmCUDA
	ParadigmMeasurementSystem
	ParadigmPthread
	ParadigmHMPP
	ParadigmOmpSs
	ParadigmHardware
	ParadigmGASPI
	ParadigmUPC
	ParadigmSHMEM
	ParadigmWinThread
	ParadigmQtThread
	ParadigmACEThread
	ParadigmTBBThread
	ParadigmOpenACC
	ParadigmOpenCL
	ParadigmMTAPI
	ParadigmSampling
	ParadigmNone
	ParadigmHIP
	ParadigmKokkos
)

// RegionFlags is OTF2_RegionFlag, a bit set.
type RegionFlags uint32

// Region flags (OTF2_REGION_FLAG_*).
const (
	RegionFlagDynamic RegionFlags = 1 << 0
	RegionFlagPhase   RegionFlags = 1 << 1
)

// GroupType is OTF2_GroupType.
type GroupType uint8

// Group types (OTF2_GROUP_TYPE_*).
const (
	GroupTypeUnknown GroupType = iota
	GroupTypeLocations
	GroupTypeRegions
	GroupTypeMetric
	// GroupTypeCommLocations lists, for one paradigm, the locations that take
	// part in its communication; the index of a location in it is its rank
	// in that paradigm. At most one such group per paradigm.
	GroupTypeCommLocations
	// GroupTypeCommGroup lists indices into the paradigm's
	// GroupTypeCommLocations group: the members of a communicator.
	GroupTypeCommGroup
	GroupTypeCommSelf
)

// GroupFlags is OTF2_GroupFlag, a bit set.
type GroupFlags uint32

// GroupFlagGlobalMembers marks a CommGroup whose communicators' events name
// peers by their index in the CommLocations group, not by their rank in the
// communicator.
const GroupFlagGlobalMembers GroupFlags = 1 << 0

// ValueType is OTF2_Type restricted to the three types a metric value can
// have.
type ValueType uint8

// Metric value types (OTF2_TYPE_*).
const (
	TypeUint64 ValueType = 4
	TypeInt64  ValueType = 8
	TypeDouble ValueType = 10
)

func (t ValueType) valid() bool { return t == TypeUint64 || t == TypeInt64 || t == TypeDouble }

// MetricType is OTF2_MetricType: where a metric comes from.
type MetricType uint8

// Metric sources (OTF2_METRIC_TYPE_*).
const (
	MetricTypeOther MetricType = iota
	MetricTypePAPI
	MetricTypeRusage
	MetricTypeUser
)

// MetricMode is OTF2_MetricMode: how successive values relate (low nibble:
// accumulated, absolute, relative) and which interval a value covers (high
// nibble: since the start, at the point, since the last, until the next).
type MetricMode uint8

// Metric modes (OTF2_METRIC_*).
const (
	MetricAccumulatedStart MetricMode = 0x00
	MetricAccumulatedPoint MetricMode = 0x10
	MetricAccumulatedLast  MetricMode = 0x20
	MetricAccumulatedNext  MetricMode = 0x30
	MetricAbsolutePoint    MetricMode = 0x11
	MetricAbsoluteLast     MetricMode = 0x21
	MetricAbsoluteNext     MetricMode = 0x31
	MetricRelativePoint    MetricMode = 0x12
	MetricRelativeLast     MetricMode = 0x22
	MetricRelativeNext     MetricMode = 0x32
)

// MetricBase is OTF2_Base: the base of a metric's unit exponent.
type MetricBase uint8

// Metric bases (OTF2_BASE_*).
const (
	BaseBinary MetricBase = iota
	BaseDecimal
)

// MetricOccurrence is OTF2_MetricOccurrence.
type MetricOccurrence uint8

// Metric occurrences (OTF2_METRIC_*).
const (
	// MetricSynchronousStrict: recorded at every enter and leave.
	MetricSynchronousStrict MetricOccurrence = iota
	// MetricSynchronous: recorded at some enters and leaves.
	MetricSynchronous
	// MetricAsynchronous: recorded at any time.
	MetricAsynchronous
)

// RecorderKind is OTF2_RecorderKind.
type RecorderKind uint8

// Recorder kinds (OTF2_RECORDER_KIND_*).
const (
	RecorderUnknown RecorderKind = iota
	RecorderAbstract
	RecorderCPU
	RecorderGPU
)

// The OTF2 location types, location group types and communicator flags this
// writer emits.
const (
	locationTypeCPUThread    = 1
	locationGroupTypeProcess = 1
)

// CollectiveOp is OTF2_CollectiveOp: the operation of a collective event.
type CollectiveOp uint8

// Collective operations (OTF2_COLLECTIVE_OP_*).
const (
	CollBarrier CollectiveOp = iota
	CollBcast
	CollGather
	CollGatherv
	CollScatter
	CollScatterv
	CollAllgather
	CollAllgatherv
	CollAlltoall
	CollAlltoallv
	CollAlltoallw
	CollAllreduce
	CollReduce
	CollReduceScatter
	CollScan
	CollExscan
	CollReduceScatterBlock
	CollCreateHandle
	CollDestroyHandle
	CollAllocate
	CollDeallocate
	CollCreateHandleAndAllocate
	CollDestroyHandleAndDeallocate
)

// CommFlags is OTF2_CommFlag, a bit set (OTF2 3.0).
type CommFlags uint32

// CommFlagCreateDestroyEvents marks a communicator whose creation and
// destruction the locations record with CommCreate and CommDestroy events.
const CommFlagCreateDestroyEvents CommFlags = 1 << 0

// NoRoot is the root of a collective operation that has none
// (OTF2_UNDEFINED_UINT32).
const NoRoot uint32 = undefined
