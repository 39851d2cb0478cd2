package main

/*
#include "task.h"
*/
import "C"

import (
	"github.com/hmbtrace/hmbtrace/cshim"
	"github.com/hmbtrace/hmbtrace/encode"
)

// The direct path's task records (task.c) are encode's, and their staged
// form cshim's (each index is 0 only when the two agree).
var _ = [1]struct{}{}[(C.HMB_TASK_TIED-cshim.TaskTied)|(C.HMB_TOK_TASK-encode.TokTask)|
	(C.HMB_MAX_TASK-encode.MaxTaskSize)|(C.HMB_PUT_ROOM-max(encode.MaxMessageSize, encode.MaxCollectiveSize))]
