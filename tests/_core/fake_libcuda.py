"""The C source of a fake CUDA driver (libcuda) for tests/_core/test_cuda_fake.py, kept in a
Python module because the repository ignores *.c files (Cython output)."""

SOURCE = r"""/* A fake CUDA driver for tests/_core/test_cuda*.py: every entry point mxc/_core/cuda.pyx opens,
   working on host memory, so the launch path (argument packing, engine device workers, copies,
   events, errors) runs for real without a GPU. A "CUfunction" is the address of one of the
   fake_* host functions below, called with the packed parameter array. Knobs (environment):
   FAKE_CUDA_INIT_RC (cuInit's result), FAKE_CUDA_NDEV (devices), FAKE_CUDA_LAUNCH_RC (every
   cuLaunchKernel fails with it), FAKE_CUDA_KERNEL_NS (the device time a launch takes: a
   device clock the launches advance, which events record and cuEventElapsedTime reads). A kernel returning nonzero makes that error sticky, as a real
   device error: later syncs report it. Device addresses are host addresses with bit 62 set
   (non-canonical on x86-64), so host code that reads or writes device memory directly faults
   here as it does on a real GPU; the copies and the fake kernels take the bit off. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>

typedef int CUresult;
#define DEV_TAG ((uintptr_t)1 << 62)
#define HOST(d) ((void *)((uintptr_t)(d) ^ DEV_TAG))     /* device address -> the host memory */
static int env_int(const char *n, int d) { const char *s = getenv(n); return s ? atoi(s) : d; }

static volatile int sticky = 0;
static long long n_launch, n_sync, n_wait, n_alloc, n_free, n_event, n_memcpy, bytes_live;
static long long last_tid, dev_clock, n_elapsed;
static unsigned last_grid[3], last_block[3], last_shmem;
static void *last_stream;

long long fake_stat(int k) {
    switch (k) {
    case 0: return n_launch; case 1: return n_sync; case 2: return n_wait;
    case 3: return n_alloc; case 4: return n_free; case 5: return n_event;
    case 6: return n_memcpy; case 7: return bytes_live; case 8: return last_tid;
    case 9: return last_grid[0]; case 10: return last_block[0]; case 11: return last_shmem;
    case 12: return (long long)(uintptr_t)last_stream;
    case 13: return n_elapsed; case 14: return dev_clock;
    }
    return -1;
}

CUresult cuInit(unsigned f) { (void)f; return env_int("FAKE_CUDA_INIT_RC", 0); }
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = env_int("FAKE_CUDA_NDEV", 1); return 0; }
CUresult cuDeviceGet(int *d, int i) { *d = i; return 0; }
CUresult cuDeviceGetName(char *b, int n, int d) { snprintf(b, n, "Fake GPU %d", d); return 0; }
CUresult cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)(uintptr_t)(0x1000 + d); return 0; }
CUresult cuCtxSetCurrent(void *c) { (void)c; return 0; }
CUresult cuStreamCreate(void **s, unsigned f) {
    static int k = 0; (void)f; *s = (void *)(uintptr_t)(0x2000 + __atomic_add_fetch(&k, 1, 0)); return 0;
}
CUresult cuStreamSynchronize(void *s) { (void)s; __atomic_add_fetch(&n_sync, 1, 0); return sticky; }
CUresult cuStreamWaitEvent(void *s, void *e, unsigned f) { (void)s; (void)e; (void)f; __atomic_add_fetch(&n_wait, 1, 0); return sticky; }
/* an event: the device clock when it was recorded (-1: never), and whether it may time */
struct fake_event { long long t; unsigned flags; };
CUresult cuEventCreate(void **e, unsigned f) {
    struct fake_event *ev = malloc(sizeof *ev); ev->t = -1; ev->flags = f; *e = ev;
    __atomic_add_fetch(&n_event, 1, 0); return 0;
}
CUresult cuEventRecord(void *e, void *s) {
    (void)s; ((struct fake_event *)e)->t = __atomic_load_n(&dev_clock, 0); return sticky;
}
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
    struct fake_event *s = a, *e = b;
    if ((s->flags | e->flags) & 2) return 400;     /* CUDA_ERROR_INVALID_HANDLE: no timing */
    if (s->t < 0 || e->t < 0) return 600;          /* CUDA_ERROR_NOT_READY: never recorded */
    __atomic_add_fetch(&n_elapsed, 1, 0);
    *ms = (float)((e->t - s->t) / 1e6); return sticky;
}
CUresult cuEventSynchronize(void *e) { (void)e; __atomic_add_fetch(&n_sync, 1, 0); return sticky; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }

typedef int (*fake_kernel)(void **params);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, void *stream, void **params, void **extra) {
    int rc;
    (void)gy; (void)gz; (void)by; (void)bz; (void)extra;
    if (sticky) return sticky;
    rc = env_int("FAKE_CUDA_LAUNCH_RC", 0);
    if (rc) return rc;
    __atomic_add_fetch(&n_launch, 1, 0);
    last_tid = syscall(SYS_gettid);
    last_grid[0] = gx; last_block[0] = bx; last_shmem = shmem; last_stream = stream;
    rc = ((fake_kernel)f)(params);
    __atomic_add_fetch(&dev_clock, env_int("FAKE_CUDA_KERNEL_NS", 0), 0);
    if (rc) sticky = rc;      /* asynchronous: the launch succeeded, a later sync reports it */
    return 0;
}

CUresult cuMemAlloc_v2(unsigned long long *p, size_t n) {
    void *m = NULL;
    if (posix_memalign(&m, 256, n + 8)) return 2;   /* CUDA_ERROR_OUT_OF_MEMORY */
    *(size_t *)m = n;
    *p = (unsigned long long)((uintptr_t)m ^ DEV_TAG);
    __atomic_add_fetch(&n_alloc, 1, 0);
    __atomic_add_fetch(&bytes_live, (long long)n, 0);
    return 0;
}
CUresult cuMemFree_v2(unsigned long long p) {
    __atomic_add_fetch(&n_free, 1, 0);
    free(HOST(p));
    return sticky;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned f) { (void)f; *p = malloc(n); return *p ? 0 : 2; }
CUresult cuMemFreeHost(void *p) { free(p); return 0; }
CUresult cuMemcpyHtoDAsync_v2(unsigned long long d, const void *s, size_t n, void *st) {
    (void)st; if (sticky) return sticky; memcpy(HOST(d), s, n); __atomic_add_fetch(&n_memcpy, 1, 0); return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *d, unsigned long long s, size_t n, void *st) {
    (void)st; if (sticky) return sticky; memcpy(d, HOST(s), n); __atomic_add_fetch(&n_memcpy, 1, 0); return 0;
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, size_t n, void *st) {
    (void)st; if (sticky) return sticky; memcpy(HOST(d), HOST(s), n); __atomic_add_fetch(&n_memcpy, 1, 0); return 0;
}
CUresult cuMemcpyPeerAsync(unsigned long long d, void *dc, unsigned long long s, void *sc, size_t n, void *st) {
    (void)dc; (void)sc; (void)st; if (sticky) return sticky;
    memcpy(HOST(d), HOST(s), n); __atomic_add_fetch(&n_memcpy, 1, 0); return 0;
}
CUresult cuMemGetInfo_v2(size_t *fr, size_t *tot) { *tot = (size_t)1 << 34; *fr = *tot - (size_t)bytes_live; return 0; }

static const char *ename(CUresult rc) {
    switch (rc) {
    case 0: return "CUDA_SUCCESS"; case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 100: return "CUDA_ERROR_NO_DEVICE"; case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED";
    }
    return NULL;
}
static const char *etext(CUresult rc) {
    switch (rc) {
    case 100: return "no CUDA-capable device is detected";
    case 700: return "an illegal memory access was encountered";
    case 719: return "unspecified launch failure";
    }
    return "fake error";
}
CUresult cuGetErrorName(CUresult rc, const char **s) { *s = ename(rc); return *s ? 0 : 1; }
CUresult cuGetErrorString(CUresult rc, const char **s) { *s = etext(rc); return 0; }

/* ---- kernels: params[i] points at argument i's value ---- */
int fake_add_f32(void **p) {      /* (const float *x, const float *y, float *out, int64 n) */
    const float *x = HOST(*(void **)p[0]), *y = HOST(*(void **)p[1]);
    float *o = HOST(*(void **)p[2]);
    long long n = *(long long *)p[3], i;
    for (i = 0; i < n; i++) o[i] = x[i] + y[i];
    return 0;
}
struct fake_pair { int a; long long b; };
int fake_axpb(void **p) {    /* (const double *x, double *out, float alpha, pair by value, int32 n)
                                 out = alpha * x + (a + b) */
    const double *x = HOST(*(void **)p[0]);
    double *o = HOST(*(void **)p[1]);
    float alpha = *(float *)p[2];
    struct fake_pair pr = *(struct fake_pair *)p[3];
    int n = *(int *)p[4], i;
    for (i = 0; i < n; i++) o[i] = alpha * x[i] + (double)(pr.a + pr.b);
    return 0;
}
int fake_illegal(void **p) { (void)p; return 700; }
int fake_noop(void **p) { (void)p; return 0; }     /* any launch, for timing the host side */
"""
