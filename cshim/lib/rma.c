/*
 * rma.c - the definitions of one-sided communication: windows and the
 * groups RMA synchronisations name, handed to the Go side (exports.go).
 * The RMA records themselves are probes (probes.c).
 */
#include <stdlib.h>
#include <string.h>

#include "hmbtrace.h"
#include "shim.h"
#include "_cgo_export.h"

HMB_NOINST uint32_t hmb_win_define(uint32_t comm)
{
	if (!hmb_def_ready()) {
		return 0;
	}
	char *err = NULL;
	uint32_t id = HMB_GO(hmbgo_win_define(comm, &err));
	hmb_def_error(err);
	return id;
}

HMB_NOINST void hmb_win_name(uint32_t win, const char *name)
{
	if (name == NULL || !hmb_def_ready()) {
		return;
	}
	char *err = NULL;
	HMB_GO(hmbgo_win_name(win, (char *)name, strlen(name), &err));
	hmb_def_error(err);
}

HMB_NOINST uint32_t hmb_rma_group_define(const int32_t *members, int nmembers)
{
	if (nmembers < 0 || (nmembers > 0 && members == NULL)) {
		hmb_def_error(strdup("hmbtrace: hmb_rma_group_define: the count is negative, or the array NULL"));
		return 0;
	}
	if (!hmb_def_ready()) {
		return 0;
	}
	char *err = NULL;
	uint32_t id = HMB_GO(hmbgo_rma_group_define((int32_t *)members, (size_t)nmembers, &err));
	hmb_def_error(err);
	return id;
}
