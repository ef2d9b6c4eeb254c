/* The kernel call contract shared by every CPU operator.
 *
 * A kernel is `int k(mxc_opcall *call)`: it reads call->in[0..nin), writes call->out[0..nout)
 * and returns 0, or returns -1 after writing a message into call->err. It runs on an engine
 * worker without the GIL, so it touches no Python object. Every tensor is C-contiguous and its
 * dtype, shape and size were checked against the operator's inference at the Python boundary;
 * a kernel does not re-check per element.
 */
#ifndef MXC_OPCALL_H
#define MXC_OPCALL_H
#include <stdint.h>
#include <stddef.h>

/* MXNet's shape type has no rank limit; 32 is far beyond any model's arrays. Arrays past
 * it are refused at the Python boundary (mxc/_core/handle.pyx). */
#define MXC_MAX_NDIM 32
#define MXC_MAX_IATTR 128    /* room for 3 per dimension (slice begin, end, step) */
#define MXC_MAX_FATTR 8
#define MXC_ERR_LEN 256

/* dtype codes are MXNet's (mshadow type flags), so .params files map 1:1 */
enum mxc_dtype {
  MXC_FLOAT32 = 0, MXC_FLOAT64 = 1, MXC_FLOAT16 = 2, MXC_UINT8 = 3, MXC_INT32 = 4,
  MXC_INT8 = 5, MXC_INT64 = 6, MXC_BOOL = 7, MXC_INT16 = 8, MXC_UINT16 = 9,
  MXC_UINT32 = 10, MXC_UINT64 = 11, MXC_BFLOAT16 = 12
};

/* OpReqType as in MXNet: what to do with the output buffer */
enum mxc_req { MXC_REQ_NULL = 0, MXC_REQ_WRITE = 1, MXC_REQ_INPLACE = 2, MXC_REQ_ADD = 3 };

typedef struct {
  void *data;                     /* first element */
  int32_t dtype;                  /* enum mxc_dtype */
  int32_t ndim;
  int64_t size;                   /* product of shape */
  int64_t shape[MXC_MAX_NDIM];
} mxc_tensor;

typedef struct mxc_opcall mxc_opcall;
typedef int (*mxc_kernel)(mxc_opcall *call);

struct mxc_opcall {
  mxc_kernel kernel;
  int32_t nin, nout;
  mxc_tensor *in;                 /* nin descriptors */
  mxc_tensor *out;                /* nout descriptors */
  int32_t req;                    /* enum mxc_req, for every output */
  int32_t nthreads;               /* OpenMP threads; decided in Python, >= 1 */
  int32_t niattr, nfattr;
  int64_t iattr[MXC_MAX_IATTR];   /* integer attributes (axes, shapes, flags), meaning per kernel */
  double fattr[MXC_MAX_FATTR];    /* float attributes (scalars, bounds) */
  char err[MXC_ERR_LEN];          /* message when the kernel returns -1 */
};

#endif
