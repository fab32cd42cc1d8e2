/* C interface of gil_view.c, shared with the C++ side. */
#ifndef DPDB_AGENT_GIL_VIEW_H
#define DPDB_AGENT_GIL_VIEW_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dpdb_gil_view {
    uintptr_t wait_begin; /* a thread blocked on a futex in [wait_begin, wait_end) waits for it */
    uintptr_t wait_end;
    uintptr_t holder; /* the holder's PyThreadState, only compared, never read; 0: free */
};

struct dpdb_gil_thread {
    unsigned long ident;
    unsigned long native_id; /* 0 where the interpreter does not record it (before 3.11) */
};

/* The GIL's state, without reading any thread state: safe from any thread at any time. Returns
   -1 when there is no interpreter to look at. */
int dpdb_read_gil_view(struct dpdb_gil_view* view);

/* Up to `capacity` of the main interpreter's threads, and the ident of the one whose state is
   `holder`; returns how many threads were written, or -1. Thread states are read: call it only
   while no thread state can be freed, that is with the GIL held, or while a thread that holds the
   GIL is stuck in C code (as faulthandler does). */
int dpdb_list_threads(uintptr_t holder, struct dpdb_gil_thread* threads, int capacity,
                      unsigned long* holder_ident);

#ifdef __cplusplus
}
#endif

#endif
