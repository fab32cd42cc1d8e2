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
    unsigned long holder_ident; /* threading.get_ident() of the holder; 0: free or unknown */
};

struct dpdb_gil_thread {
    unsigned long ident;
    unsigned long native_id; /* 0 where the interpreter does not record it (before 3.11) */
};

/* Fills `view` and up to `capacity` of the main interpreter's threads; returns how many threads
   were written, or -1 when there is no interpreter to look at. Needs no GIL. */
int dpdb_read_gil_view(struct dpdb_gil_view* view, struct dpdb_gil_thread* threads, int capacity);

#ifdef __cplusplus
}
#endif

#endif
