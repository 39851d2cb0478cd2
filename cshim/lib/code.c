/*
 * code.c - naming code for the adapters of programming models: the
 * OpenMP adapter (cshim/openmp) names a parallel region by the function
 * the compiler outlined for it and by the line of the construct.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hmbtrace.h"
#include "shim.h"
#include "_cgo_export.h"

HMB_NOINST int hmb_code_at(const void *addr, char *name, size_t nsize, char *file, size_t fsize, int *line)
{
	int dummy;
	if (line == NULL) {
		line = &dummy;
	}
	*line = 0;
	if (file != NULL && fsize > 0) {
		file[0] = 0;
	}
	if (name != NULL && nsize > 0) {
		snprintf(name, nsize, "0x%llx", (unsigned long long)(uintptr_t)addr);
	}
	/* The symbol tables belong to the measurement: start it if nothing did. */
	if (hmb_init() != 0) {
		return 0;
	}
	return HMB_GO(hmbgo_code_at((uint64_t)(uintptr_t)addr, name, nsize, file, fsize, line));
}

HMB_NOINST uint32_t hmb_region_paradigm_ex(const char *name, const char *file, int line, int paradigm)
{
	if (paradigm < HMB_PARADIGM_USER || paradigm > HMB_PARADIGM_OPENMP) {
		return hmb_region_paradigm(name, paradigm); /* which says why it returns 0 */
	}
	return hmb_region_n(name, name != NULL ? strlen(name) : 0, file, line, paradigm);
}
