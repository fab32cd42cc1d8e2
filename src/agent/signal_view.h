/* C interface of signal_view.c, shared with the C++ side (signal_kick). */
#ifndef DPDB_AGENT_SIGNAL_VIEW_H
#define DPDB_AGENT_SIGNAL_VIEW_H

#ifdef __cplusplus
extern "C" {
#endif

/* Whether CPython's C signal handler has noted a signal whose Python handler has not run yet
   (the runtime's is_tripped; before 3.12 its request to the main thread, signals_pending): 1 or
   0, with the main thread's pthread_t in *main_thread; -1 where the layout is not known here
   (3.14, unchecked). Atomic reads only: safe from any thread, with or without the GIL. */
int dpdb_python_signal_due(unsigned long* main_thread);

#ifdef __cplusplus
}
#endif

#endif
