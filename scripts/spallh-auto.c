// spall.h's own auto-tracing output, for benchmarks: a C program built with
// -finstrument-functions whose every call spall.h records (version 3, a buffer per
// thread, rdtsc ticks, names resolved with dladdr), 4 threads of short calls recursing
// to depth 62. With 1000 rounds: 695 MB, 29.7M spans, 23 bytes a span.
//
//   curl -O https://raw.githubusercontent.com/colrdavidson/spall-web/master/spall.h
//   gcc -O2 -finstrument-functions -rdynamic -pthread scripts/spallh-auto.c -I. -o spallh-auto -ldl
//   ./spallh-auto bench-data/spallh-690mb.spall 1000
//
// Where the time-stamp counter ticks by 10 ns (as in this VM), 2.5% of the spans are
// zero-length.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>
#include "spall.h"

static SpallProfile spall_ctx;
static _Thread_local SpallBuffer spall_buffer;
static _Thread_local int running;
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct { void *addr; const char *name; int len; } Sym;
static _Thread_local Sym cache[4096];

SPALL_FN const char *name_of(void *fn, int *len) {
    unsigned h = ((unsigned)(uintptr_t)fn * 2654435769u) >> 20;
    for (;; h = (h + 1) & 4095) {
        if (cache[h].addr == fn) { *len = cache[h].len; return cache[h].name; }
        if (!cache[h].addr) {
            Dl_info info;
            const char *s = "(unknown name)";
            if (dladdr(fn, &info) && info.dli_sname) s = info.dli_sname;
            cache[h] = (Sym){fn, s, (int)strlen(s)};
            *len = cache[h].len;
            return s;
        }
    }
}

SPALL_FN bool locked_write(SpallProfile *ctx, const void *p, size_t n) {
    pthread_mutex_lock(&write_lock);
    bool ok = fwrite(p, n, 1, (FILE *)ctx->data) == 1;
    pthread_mutex_unlock(&write_lock);
    return ok;
}

SPALL_NOINSTRUMENT void __cyg_profile_func_enter(void *fn, void *caller) {
    if (!running) return;
    int len;
    const char *name = name_of(fn, &len);
    spall_buffer_begin(&spall_ctx, &spall_buffer, name, len, __rdtsc());
}
SPALL_NOINSTRUMENT void __cyg_profile_func_exit(void *fn, void *caller) {
    if (!running) return;
    spall_buffer_end(&spall_ctx, &spall_buffer, __rdtsc());
}

volatile long sink;
long leaf(long x) { return x * 3 + 1; }
long mix(long x) { return leaf(x) ^ leaf(x >> 1); }
long fib(int n) { return n < 2 ? mix(n) : fib(n - 1) + fib(n - 2); }
long walk(int d, long x) {
    if (d == 0) return mix(x);
    long s = walk(d - 1, x + 1);
    if ((x & 7) == 0) s += leaf(s);
    return s;
}
long sum(int n) { long s = 0; for (int i = 0; i < n; i++) s += mix(i); return s; }

static long rounds;
SPALL_FN void *worker(void *arg) {
    uint32_t tid = (uint32_t)(uintptr_t)arg;
    size_t size = 4 << 20;
    spall_buffer = (SpallBuffer){.data = malloc(size), .length = size, .tid = tid, .pid = 1};
    spall_buffer_init(&spall_ctx, &spall_buffer);
    running = 1;
    for (long r = 0; r < rounds; r++) {
        sink += fib(14 + (r & 3));
        sink += walk(20 + (r % 41), r);
        sink += sum(50);
    }
    running = 0;
    pthread_mutex_lock(&write_lock);
    pthread_mutex_unlock(&write_lock);
    spall_buffer_quit(&spall_ctx, &spall_buffer);
    free(spall_buffer.data);
    return NULL;
}

SPALL_FN double ns_per_tick(void) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    uint64_t t0 = __rdtsc();
    do clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 2e8);
    uint64_t t1 = __rdtsc();
    return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)(t1 - t0);
}

int main(int argc, char **argv) {
    rounds = argc > 2 ? atol(argv[2]) : 1000;
    FILE *f = fopen(argv[1], "wb");
    spall_init_callbacks(ns_per_tick(), locked_write, spall__file_flush, spall__file_close, f, &spall_ctx);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    spall_quit(&spall_ctx);
    return 0;
}
