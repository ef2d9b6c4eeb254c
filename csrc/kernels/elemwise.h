/* All elementwise kernels of mxc/ops/cpu/elemwise.pyx and their table (see elemwise_common.h
 * for the scheme, and each header for the operators' semantics). */
#ifndef MXC_ELEMWISE_H
#define MXC_ELEMWISE_H
#include "kernels/elemwise_common.h"
#include "kernels/elemwise_unary.h"
#include "kernels/elemwise_binary.h"
#include "kernels/elemwise_misc.h"
#include "kernels/elemwise_exp512.h"

static const mxc_kentry mxc_elemwise_table[] = {
    MXC_UNARY_OPS(MXC_UNARY_ENTRIES)
    MXC_COPY_ENTRIES
    MXC_BINARY_OPS(MXC_BINARY_ENTRIES)
    MXC_CAST_ENTRIES
    MXC_CLIP_ENTRIES
    MXC_WHERE_ENTRIES
    /* a later entry for the same (name, key) replaces the earlier one in KERNELS */
    MXC_POWER_SQUARE_ENTRIES
#ifdef MXC_HAVE_EXP512
    {"unary:exp", MXC_FLOAT32, -1, mxc_unary_exp_best_f32},
#endif
    {NULL, 0, 0, NULL}};

#endif
