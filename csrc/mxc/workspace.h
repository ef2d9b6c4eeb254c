/* Reusable temporary workspace for CPU kernels (MXNet's kTempSpace resource).
 *
 * mxc_workspace(slot, nbytes) returns a 64-byte aligned buffer of at least nbytes owned by the
 * calling thread, valid until the same thread asks for the same slot again. Engine workers and
 * OpenMP threads are long-lived, so a kernel that needs scratch (im2col columns, float32 copies of
 * float16 data) reuses the buffer of the previous call instead of going to malloc every time;
 * buffers grow to the largest request and are freed when their thread exits. Slots let one kernel
 * hold several buffers at once (MXC_WS_SLOTS of them). Returns NULL when out of memory.
 *
 * Each extension module that includes this header has its own buffers (the state is static):
 * scratch is shared by the kernels of a family, not across families.
 */
#ifndef MXC_WORKSPACE_H
#define MXC_WORKSPACE_H
#include <pthread.h>
#include <stdlib.h>

#define MXC_WS_SLOTS 5

typedef struct {
  void *ptr[MXC_WS_SLOTS];
  size_t cap[MXC_WS_SLOTS];
} mxc_ws_state;

static pthread_key_t mxc_ws_key;
static pthread_once_t mxc_ws_once = PTHREAD_ONCE_INIT;

static void mxc_ws_free(void *p) {
  mxc_ws_state *s = (mxc_ws_state *)p;
  for (int i = 0; i < MXC_WS_SLOTS; ++i) free(s->ptr[i]);
  free(s);
}

static void mxc_ws_init(void) { pthread_key_create(&mxc_ws_key, mxc_ws_free); }

static inline void *mxc_workspace(int slot, size_t nbytes) {
  if (slot < 0 || slot >= MXC_WS_SLOTS) return NULL;
  pthread_once(&mxc_ws_once, mxc_ws_init);
  mxc_ws_state *s = (mxc_ws_state *)pthread_getspecific(mxc_ws_key);
  if (s == NULL) {
    s = (mxc_ws_state *)calloc(1, sizeof(mxc_ws_state));
    if (s == NULL || pthread_setspecific(mxc_ws_key, s) != 0) {
      free(s);
      return NULL;
    }
  }
  if (nbytes == 0) nbytes = 1;
  if (s->cap[slot] < nbytes) {
    size_t cap = s->cap[slot] ? s->cap[slot] : 4096;
    while (cap < nbytes) cap *= 2;
    void *p = NULL;
    if (posix_memalign(&p, 64, cap) != 0) return NULL;
    free(s->ptr[slot]);
    s->ptr[slot] = p;
    s->cap[slot] = cap;
  }
  return s->ptr[slot];
}

#endif
