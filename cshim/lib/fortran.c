/*
 * fortran.c - the entry points of the Fortran module hmbtrace (hmbtrace.f90)
 * that cannot bind to the C functions directly: optional error arguments,
 * and Fortran strings, which arrive as C descriptors (Fortran 2018,
 * ISO_Fortran_binding.h) holding their length and are padded with blanks.
 */
#include <stdlib.h>
#include <string.h>

#include "hmbtrace.h"
#include "shim.h"

/*
 * The first members of a CFI_cdesc_t, which Fortran 2018 (18.5.3) fixes in
 * this order; declared here so that building the library needs no Fortran
 * compiler's headers.
 */
typedef struct hmb_cfi_prefix {
	void *base_addr;
	size_t elem_len;
	int version;
} hmb_cfi_prefix;

uint32_t hmb_region_f(const hmb_cfi_prefix *name) HMB_NOINST;
void hmb_thread_name_f(const hmb_cfi_prefix *name) HMB_NOINST;

/* hmb_trimmed returns a Fortran string's length without its trailing blanks. */
HMB_NOINST static size_t hmb_trimmed(const hmb_cfi_prefix *s)
{
	const char *p = s->base_addr;
	size_t n = s->elem_len;
	while (n > 0 && p[n - 1] == ' ') {
		n--;
	}
	return n;
}

void hmb_init_f(int *ierr)
{
	int rc = hmb_init();
	if (ierr != NULL) {
		*ierr = rc;
	}
}

void hmb_finalize_f(int *ierr)
{
	int rc = hmb_finalize();
	if (ierr != NULL) {
		*ierr = rc;
	}
}

uint32_t hmb_region_f(const hmb_cfi_prefix *name)
{
	if (name == NULL || name->base_addr == NULL) {
		return hmb_region(NULL);
	}
	return hmb_region_n(name->base_addr, hmb_trimmed(name), NULL, 0, HMB_PARADIGM_USER);
}

void hmb_thread_name_f(const hmb_cfi_prefix *name)
{
	if (name == NULL || name->base_addr == NULL) {
		return;
	}
	size_t n = hmb_trimmed(name);
	char *s = malloc(n + 1);
	if (s == NULL) {
		return;
	}
	memcpy(s, name->base_addr, n);
	s[n] = 0;
	hmb_thread_name(s);
	free(s);
}
