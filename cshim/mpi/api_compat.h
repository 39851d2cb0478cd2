/*
 * api_compat.h - hmb_region_paradigm for a hmbtrace.h that does not have
 * it yet (it comes with the regions' paradigm): MPI regions are then plain
 * regions.
 */
#ifndef HMBTRACE_MPI_API_COMPAT_H
#define HMBTRACE_MPI_API_COMPAT_H

#ifndef HMB_PARADIGM_MPI
#define HMB_PARADIGM_MPI 2
static inline uint32_t hmb_region_paradigm(const char *name, int paradigm)
{
	(void)paradigm;
	return hmb_region(name);
}
#endif

#endif
