/* What every CPU kernel header includes: the call contract, float16 conversion, and OpenMP
 * pragmas that vanish in builds without -fopenmp (no unknown-pragma warnings there). */
#ifndef MXC_KERNELS_COMMON_H
#define MXC_KERNELS_COMMON_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "mxc/opcall.h"
#include "kernels/half.h"

#ifdef _OPENMP
#define MXC_PRAGMA(x) _Pragma(#x)
#define MXC_TID() omp_get_thread_num()
#define MXC_NTH() omp_get_num_threads()
#else
#define MXC_PRAGMA(x)
#define MXC_TID() 0
#define MXC_NTH() 1
#endif

/* One kernel of a family's table: its name, the dtype code it is for (MXNet's type flag) and
 * the function. mxc/ops/cpu/_table.pxd turns a table of these into the module's KERNELS. */
typedef struct {
  const char *name;
  int32_t code;
  mxc_kernel fn;
} mxc_code_entry;
#endif
