/*
 * Register blocking of the integer (INT8) packed kernels, opt/qpacked.c.
 *
 * Weights are packed at compile time in panels of CUVIL_QMR output
 * channels and groups of CUVIL_QKR reduction steps (cuvil/kernels/qint.h
 * gives the layout); cuvilc reads the values the kernel library was built
 * with (the exported constants cuvil_k_qpack_mr / cuvil_k_qpack_kr), so the
 * two cannot disagree.
 */
#ifndef CUVIL_KERNELS_OPT_QBLOCKING_H
#define CUVIL_KERNELS_OPT_QBLOCKING_H

#include "blocking.h"

#define CUVIL_QMR 8
#define CUVIL_QKR 4

#endif
