/*
 * task.h - the task records' constants that Go must agree with (task.go
 * checks them at compile time). Not installed.
 */
#ifndef HMBTRACE_TASK_H
#define HMBTRACE_TASK_H

#include "golayout.h"

enum {
	/* In [1].time of a staged task record: a tied task's (cshim.TaskTied). */
	HMB_TASK_TIED = 1,
	/* encode.TokTask and encode.MaxTaskSize. */
	HMB_TOK_TASK = 0xFB,
	HMB_MAX_TASK = 1 + 5 + 1 + 1 + 10 + 10,
	/* The room buffer.Level.Put wants before any record but an enter or leave. */
	HMB_PUT_ROOM = HMB_MAX_MESSAGE > HMB_MAX_COLLECTIVE ? HMB_MAX_MESSAGE : HMB_MAX_COLLECTIVE,
};

#endif /* HMBTRACE_TASK_H */
