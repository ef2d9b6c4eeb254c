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
   here as it does on a real GPU; the copies and the fake kernels take the bit off.
   CUDA graphs: a stream in capture records launches (with copies of their arguments, sized by
   the fake kernels' table) and device-to-device copies instead of running them; a host sync
   or a pageable host copy during a capture invalidates it (as the real driver does);
   cuGraphLaunch runs the recorded nodes. FAKE_CUDA_NO_GRAPHS hides the graph API. */
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
static long long n_graph_launch, n_captured, n_instantiate, n_graph_freed, last_capture_mode = -1;

/* ---- CUDA graph capture state (one capture at a time is all mxc opens per device) ---- */
#define MAXNODES 512
#define MAXARGS 24
#define ARGBYTES 512
struct fake_node { void *f; int nargs; void *params[MAXARGS]; unsigned char args[MAXARGS][ARGBYTES];
                   unsigned gx, bx;                             /* the launch's grid and block */
                   void (*host)(void *); void *harg;            /* a host function node */
                   unsigned long long dst, src; size_t n; };   /* f and host NULL: a DtoD copy */
struct fake_graph { int n; struct fake_node node[MAXNODES]; };
static void *cap_stream;           /* the stream in capture, or NULL */
static int cap_invalid;
static struct fake_graph *cap_graph;
static int capturing(void *s) { return cap_stream != NULL && s == cap_stream; }
static CUresult cap_refuse(void) { cap_invalid = 1; return 900; } /* CAPTURE_UNSUPPORTED */
static int param_sizes(void *f, int *sz);

long long fake_stat(int k) {
    switch (k) {
    case 0: return n_launch; case 1: return n_sync; case 2: return n_wait;
    case 3: return n_alloc; case 4: return n_free; case 5: return n_event;
    case 6: return n_memcpy; case 7: return bytes_live; case 8: return last_tid;
    case 9: return last_grid[0]; case 10: return last_block[0]; case 11: return last_shmem;
    case 12: return (long long)(uintptr_t)last_stream;
    case 13: return n_elapsed; case 14: return dev_clock;
    case 15: return n_graph_launch; case 16: return n_captured; case 17: return n_instantiate;
    case 18: return n_graph_freed; case 19: return last_capture_mode;
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
CUresult cuStreamSynchronize(void *s) { if (cap_stream) return cap_refuse(); (void)s; __atomic_add_fetch(&n_sync, 1, 0); return sticky; }
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
CUresult cuEventSynchronize(void *e) { if (cap_stream) return cap_refuse(); (void)e; __atomic_add_fetch(&n_sync, 1, 0); return sticky; }
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }

typedef int (*fake_kernel)(void **params);
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, void *stream, void **params, void **extra) {
    int rc;
    (void)gy; (void)gz; (void)by; (void)bz; (void)extra;
    if (sticky) return sticky;
    rc = env_int("FAKE_CUDA_LAUNCH_RC", 0);
    if (rc) return rc;
    if (capturing(stream)) {       /* recorded with a copy of its arguments, not run */
        int sz[MAXARGS], k, na;
        struct fake_node *nd;
        if (cap_invalid) return 901;                /* CAPTURE_INVALIDATED */
        na = param_sizes(f, sz);
        if (na < 0 || cap_graph->n >= MAXNODES) return cap_refuse();
        nd = &cap_graph->node[cap_graph->n++];
        nd->f = f; nd->nargs = na; nd->gx = gx; nd->bx = bx;
        for (k = 0; k < na; k++) { memcpy(nd->args[k], params[k], sz[k]); nd->params[k] = nd->args[k]; }
        __atomic_add_fetch(&n_captured, 1, 0);
        return 0;
    }
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
    if (capturing(st)) return cap_refuse();       /* pageable host memory: not in a graph */
    (void)st; if (sticky) return sticky; memcpy(HOST(d), s, n); __atomic_add_fetch(&n_memcpy, 1, 0); return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *d, unsigned long long s, size_t n, void *st) {
    if (capturing(st)) return cap_refuse();
    (void)st; if (sticky) return sticky; memcpy(d, HOST(s), n); __atomic_add_fetch(&n_memcpy, 1, 0); return 0;
}
CUresult cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, size_t n, void *st) {
    if (capturing(st)) {
        struct fake_node *nd;
        if (cap_invalid) return 901;
        if (cap_graph->n >= MAXNODES) return cap_refuse();
        nd = &cap_graph->node[cap_graph->n++];
        nd->f = NULL; nd->dst = d; nd->src = s; nd->n = n;
        __atomic_add_fetch(&n_captured, 1, 0);
        return 0;
    }
    (void)st; if (sticky) return sticky; memcpy(HOST(d), HOST(s), n); __atomic_add_fetch(&n_memcpy, 1, 0); return 0;
}
CUresult cuMemcpyPeerAsync(unsigned long long d, void *dc, unsigned long long s, void *sc, size_t n, void *st) {
    (void)dc; (void)sc; (void)st; if (sticky) return sticky;
    memcpy(HOST(d), HOST(s), n); __atomic_add_fetch(&n_memcpy, 1, 0); return 0;
}
CUresult cuMemGetInfo_v2(size_t *fr, size_t *tot) { *tot = (size_t)1 << 34; *fr = *tot - (size_t)bytes_live; return 0; }

/* ---- the graph API (absent with FAKE_CUDA_NO_GRAPHS: mxc looks it up with dlsym) ---- */
static int no_graphs(void) { return env_int("FAKE_CUDA_NO_GRAPHS", 0); }
CUresult cuStreamBeginCapture_v2(void *s, int mode) {
    if (no_graphs()) return 801;
    if (cap_stream) return 900;
    cap_graph = calloc(1, sizeof *cap_graph);
    cap_stream = s; cap_invalid = 0; last_capture_mode = mode;
    return 0;
}
CUresult cuStreamEndCapture(void *s, void **graph) {
    if (!capturing(s)) return 401;               /* CUDA_ERROR_ILLEGAL_STATE */
    cap_stream = NULL; *graph = NULL;
    if (cap_invalid) { free(cap_graph); cap_graph = NULL; return 901; }
    *graph = cap_graph; cap_graph = NULL;
    return 0;
}
CUresult cuGraphGetNodes(void *g, void **nodes, size_t *n) {
    (void)nodes; *n = (size_t)((struct fake_graph *)g)->n; return 0;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *g, unsigned long long flags) {
    struct fake_graph *e = malloc(sizeof *e);
    int i, k;
    (void)flags;
    memcpy(e, g, sizeof *e);
    for (i = 0; i < e->n; i++)
        for (k = 0; k < e->node[i].nargs; k++) e->node[i].params[k] = e->node[i].args[k];
    *exec = e; __atomic_add_fetch(&n_instantiate, 1, 0);
    return 0;
}
CUresult cuGraphLaunch(void *exec, void *s) {
    struct fake_graph *e = exec;
    int i, rc;
    if (sticky) return sticky;
    if (capturing(s)) return cap_refuse();
    __atomic_add_fetch(&n_graph_launch, 1, 0);
    last_stream = s;
    for (i = 0; i < e->n; i++) {
        struct fake_node *nd = &e->node[i];
        if (nd->host) { nd->host(nd->harg); continue; }
        if (nd->f == NULL) { memcpy(HOST(nd->dst), HOST(nd->src), nd->n); continue; }
        last_grid[0] = nd->gx; last_block[0] = nd->bx;
        rc = ((fake_kernel)nd->f)(nd->params);
        if (rc) { sticky = rc; break; }
    }
    return 0;
}
CUresult cuGraphDestroy(void *g) { free(g); __atomic_add_fetch(&n_graph_freed, 1, 0); return 0; }
CUresult cuGraphExecDestroy(void *e) { free(e); __atomic_add_fetch(&n_graph_freed, 1, 0); return 0; }

static const char *ename(CUresult rc) {
    switch (rc) {
    case 0: return "CUDA_SUCCESS"; case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 100: return "CUDA_ERROR_NO_DEVICE"; case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 719: return "CUDA_ERROR_LAUNCH_FAILED"; case 801: return "CUDA_ERROR_NOT_SUPPORTED";
    case 900: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    case 901: return "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; case 401: return "CUDA_ERROR_ILLEGAL_STATE";
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
int fake_scale_f32(void **p) {    /* (const float *x, float *out, float alpha, int64 n): out = alpha * x */
    const float *x = HOST(*(void **)p[0]);
    float *o = HOST(*(void **)p[1]);
    float alpha = *(float *)p[2];
    long long n = *(long long *)p[3], i;
    for (i = 0; i < n; i++) o[i] = alpha * x[i];
    return 0;
}
int fake_fill_f32(void **p) {     /* (float *out, float value, int64 n) */
    float *o = HOST(*(void **)p[0]);
    float v = *(float *)p[1];
    long long n = *(long long *)p[2], i;
    for (i = 0; i < n; i++) o[i] = v;
    return 0;
}

/* the argument sizes of each fake kernel (the real driver knows them from the cubin): a capture
   copies the arguments, as cuLaunchKernel does */
/* kernels made elsewhere (the tests' emulated GPU) register their argument sizes; a host
   function queued while a stream is in capture becomes a node of its graph */
#define MAXREG 8192
static struct { void *f; int n; int sz[MAXARGS]; } reg[MAXREG];
static int nreg;
int fake_register_kernel(void *f, int n, const int *sz) {
    int k, i;
    if (n > MAXARGS || nreg >= MAXREG) return -1;
    for (k = 0; k < n; k++) if (sz[k] > ARGBYTES) return -1;
    i = __atomic_fetch_add(&nreg, 1, 0);
    reg[i].f = f; reg[i].n = n;
    memcpy(reg[i].sz, sz, sizeof(int) * (size_t)n);
    return 0;
}
int fake_capture_host(void (*fn)(void *), void *arg) {
    struct fake_node *nd;
    if (cap_stream == NULL) return -1;
    if (cap_invalid) return 901;
    if (cap_graph->n >= MAXNODES) return cap_refuse();
    nd = &cap_graph->node[cap_graph->n++];
    nd->host = fn; nd->harg = arg; nd->f = NULL;
    __atomic_add_fetch(&n_captured, 1, 0);
    return 0;
}
static int param_sizes(void *f, int *sz) {
    int i;
    for (i = 0; i < nreg; i++)
        if (reg[i].f == f) {
            memcpy(sz, reg[i].sz, sizeof(int) * (size_t)reg[i].n);
            return reg[i].n;
        }
    if (f == (void *)fake_add_f32) { for (i = 0; i < 4; i++) sz[i] = 8; return 4; }
    if (f == (void *)fake_scale_f32) { sz[0] = 8; sz[1] = 8; sz[2] = 4; sz[3] = 8; return 4; }
    if (f == (void *)fake_fill_f32) { sz[0] = 8; sz[1] = 4; sz[2] = 8; return 3; }
    if (f == (void *)fake_axpb) { sz[0] = 8; sz[1] = 8; sz[2] = 4; sz[3] = 16; sz[4] = 4; return 5; }
    if (f == (void *)fake_noop || f == (void *)fake_illegal) return 0;
    return -1;
}
"""
