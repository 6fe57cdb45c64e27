/* An LD_PRELOAD shim that counts the bytes a process copies with memcpy/memmove (the calls
 * that go through the PLT: Rust's copies of run-time length; constant-size copies the
 * compiler inlines are not seen). At exit it appends "<pid> memcpy <bytes> <calls> memmove
 * <bytes> <calls>" to the file named by MEMCPY_COUNT_OUT. Used by benches/memcpy_per_record.sh
 * (issue 22: bytes copied per output frame). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdatomic.h>

static _Atomic unsigned long long cpy_bytes, cpy_calls, mov_bytes, mov_calls;

/* Byte loops of our own: calling libc's from inside the override would need dlsym, which
 * may itself copy. */
void *memcpy(void *restrict d, const void *restrict s, size_t n) {
    atomic_fetch_add_explicit(&cpy_bytes, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&cpy_calls, 1, memory_order_relaxed);
    unsigned char *dd = d;
    const unsigned char *ss = s;
    while (n--) *dd++ = *ss++;
    return d;
}

void *memmove(void *d, const void *s, size_t n) {
    atomic_fetch_add_explicit(&mov_bytes, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&mov_calls, 1, memory_order_relaxed);
    unsigned char *dd = d;
    const unsigned char *ss = s;
    if (dd < ss) {
        while (n--) *dd++ = *ss++;
    } else {
        dd += n;
        ss += n;
        while (n--) *--dd = *--ss;
    }
    return d;
}

__attribute__((destructor)) static void report(void) {
    const char *path = getenv("MEMCPY_COUNT_OUT");
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%d memcpy %llu %llu memmove %llu %llu\n", (int)getpid(),
            (unsigned long long)cpy_bytes, (unsigned long long)cpy_calls,
            (unsigned long long)mov_bytes, (unsigned long long)mov_calls);
    fclose(f);
}

/* The bytes copied so far: read in-process by benches/output_copies.rs through dlsym. */
unsigned long long memcount_total(void) {
    return (unsigned long long)cpy_bytes + (unsigned long long)mov_bytes;
}
