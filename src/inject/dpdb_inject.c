/* The library `dpdb attach` loads into a running Python process with dlopen(), and whose
 * dpdb_inject_start() it then calls, both from the main thread, stopped with ptrace. That thread
 * runs no Python code: dpdb_inject_start() only notes who it is and starts a thread of its own.
 * The new thread takes the GIL like any thread that calls into Python (PyGILState_Ensure waits
 * for the thread that holds it to let go), and runs the agent's start-up file from the attach's
 * request folder, whatever the main thread waits on in C meanwhile (a sleep, a read, a lock).
 *
 * It links against no Python: the interpreter's functions are looked up in the process (the
 * executable or libpython exports them), so one build serves every CPython version. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*is_initialized_fn)(void);
typedef int (*gil_ensure_fn)(void);
typedef void (*gil_release_fn)(int);
typedef int (*run_string_fn)(const char*);

enum { kRequestPathMax = 1024, kInitialisedWaitMs = 10000 };

static char g_request[kRequestPathMax];
static char g_code[2 * kRequestPathMax + 192];
/* The main thread's identity as Python's threading module knows threads (pthread_self). */
static unsigned long g_main_thread;

/* Only what `dpdb attach` writes: a path under its runtime folder, safe inside a Python literal. */
static int plain_path(const char* path) {
    size_t length = strlen(path);
    if (length == 0 || length >= kRequestPathMax || path[0] != '/') return 0;
    for (size_t i = 0; i < length; ++i) {
        const char c = path[i];
        if (!(c == '/' || c == '.' || c == '_' || c == '-' || (c >= '0' && c <= '9') ||
              (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            return 0;
        }
    }
    return 1;
}

/* Written aside and renamed, as start.py does: the attach reads the reply once it exists, and
   must never read it half written. */
static void write_reply(const char* text) {
    char path[kRequestPathMax + 32];
    char partial[kRequestPathMax + 32];
    snprintf(path, sizeof path, "%s/reply.json", g_request);
    snprintf(partial, sizeof partial, "%s/reply.json.tmp", g_request);
    FILE* file = fopen(partial, "w");
    if (file == NULL) return;
    fputs(text, file);
    if (fclose(file) == 0) rename(partial, path);
}

/* Holding the GIL. An attach that gave up meanwhile removed its request: nothing to do then. */
static void run_start_script(run_string_fn run_string) {
    char script[kRequestPathMax + 16];
    snprintf(script, sizeof script, "%s/start.py", g_request);
    if (access(script, R_OK) != 0) return;
    if (run_string(g_code) != 0) {
        write_reply("{\"error\": \"the agent's start-up failed; the process's stderr says why\"}");
    }
}

static void* start_agent(void* unused) {
    (void)unused;
    /* dpdb's own threads are named dpdb-*: the agent tells them from the program's by name. */
    pthread_setname_np(pthread_self(), "dpdb-attach");
    is_initialized_fn is_initialized = (is_initialized_fn)dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    gil_ensure_fn gil_ensure = (gil_ensure_fn)dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
    gil_release_fn gil_release = (gil_release_fn)dlsym(RTLD_DEFAULT, "PyGILState_Release");
    run_string_fn run_string = (run_string_fn)dlsym(RTLD_DEFAULT, "PyRun_SimpleString");
    if (!is_initialized || !gil_ensure || !gil_release || !run_string) {
        write_reply(
            "{\"error\": \"the process exports no CPython API (not CPython, or an "
            "interpreter built without exported symbols)\"}");
        return NULL;
    }
    /* A process attached during its start-up: wait until the interpreter exists. */
    for (int waited = 0; !is_initialized(); waited += 10) {
        if (waited >= kInitialisedWaitMs) {
            write_reply("{\"error\": \"the interpreter did not finish starting within 10 s\"}");
            return NULL;
        }
        struct timespec tick = {0, 10 * 1000 * 1000};
        nanosleep(&tick, NULL);
    }
    snprintf(g_code, sizeof g_code,
             "exec(compile(open('%s/start.py').read(), '<dpdb attach>', 'exec'), "
             "{'__name__': '__dpdb_attach__', 'REQUEST': '%s', 'MAIN_THREAD': %lu})",
             g_request, g_request, g_main_thread);
    /* Never in the main thread, which may wait in C code for ever; the start-up puts right what
     * the threading module, if this thread is the first to import it, takes for the main one. */
    const int state = gil_ensure();
    run_start_script(run_string);
    gil_release(state);
    return NULL;
}

/* Called by `dpdb attach` in the stopped main thread: returns at once (0, or -1 if nothing
 * started). */
__attribute__((visibility("default"))) int dpdb_inject_start(const char* request) {
    if (!plain_path(request)) return -1;
    memcpy(g_request, request, strlen(request) + 1);
    g_main_thread = (unsigned long)pthread_self();
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    const int failed = pthread_create(&thread, &attributes, start_agent, NULL);
    pthread_attr_destroy(&attributes);
    return failed ? -1 : 0;
}
