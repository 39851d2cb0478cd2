/*
 * api_compat.h - the calls of hmbtrace.h that the wrappers record through
 * (communicators, requests, collectives with bytes received, regions of the
 * MPI paradigm), for a hmbtrace.h that does not have them yet: the Makefile
 * defines HMBMPI_OLD_API when its hmbtrace.h lacks hmb_comm_define. Each
 * falls back on the call of the older API that records the most of it: a
 * non-blocking send is a send at the call, a non-blocking receive a receive
 * where it completes, a non-blocking collective a collective at the call.
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

#ifdef HMBMPI_OLD_API
static inline uint32_t hmb_comm_define(const char *name, uint32_t parent, const int32_t *members, int nmembers,
				       const int32_t *remote, int nremote)
{
	(void)name, (void)parent, (void)members, (void)nmembers, (void)remote, (void)nremote;
	return 0;
}
static inline void hmb_send_comm(int peer, uint32_t tag, uint64_t bytes, uint32_t comm)
{
	(void)comm;
	hmb_send(peer, tag, bytes);
}
static inline void hmb_recv_comm(int peer, uint32_t tag, uint64_t bytes, uint32_t comm)
{
	(void)comm;
	hmb_recv(peer, tag, bytes);
}
static inline void hmb_isend(int peer, uint32_t tag, uint64_t bytes, uint32_t comm, uint64_t request)
{
	(void)comm, (void)request;
	hmb_send(peer, tag, bytes);
}
static inline void hmb_isend_complete(uint64_t request) { (void)request; }
static inline void hmb_irecv_request(uint64_t request) { (void)request; }
static inline void hmb_irecv(int peer, uint32_t tag, uint64_t bytes, uint32_t comm, uint64_t request)
{
	(void)comm, (void)request;
	hmb_recv(peer, tag, bytes);
}
static inline void hmb_request_cancelled(uint64_t request) { (void)request; }
static inline void hmb_enter_collective_comm(uint32_t region, int root, uint64_t sent, uint64_t received,
					     uint32_t comm)
{
	(void)received, (void)comm;
	hmb_enter_collective(region, root, sent);
}
static inline void hmb_collective_request(uint64_t request) { (void)request; }
static inline void hmb_collective_complete(uint32_t region, int root, uint64_t sent, uint64_t received,
					   uint32_t comm, uint64_t request)
{
	(void)region, (void)root, (void)sent, (void)received, (void)comm, (void)request;
}
#endif

#endif
