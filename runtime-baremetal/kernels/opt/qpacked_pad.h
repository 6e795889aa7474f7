/* The padded copy of the integer packed convolution (qpacked.c; included
 * by it only, after run_all): a small input whose blocks of positions
 * span output rows is copied with its padding into a stack buffer, and
 * run as an unpadded image. */
#ifndef CUVIL_KERNELS_OPT_QPACKED_PAD_H
#define CUVIL_KERNELS_OPT_QPACKED_PAD_H

/* A small input whose blocks of positions span output rows (DS-CNN's
 * 49x10 image, 25x5 outputs) is copied with its padding into a buffer on
 * the stack, so that gather_lanes takes every block: without padding
 * every lane reads inside. */
#define QPAD_BYTES 2048

/* Whether a convolution of src's shape takes the padded copy: a window of
 * several taps (a 1x1 one reads no padding), padding, blocks across rows,
 * and one group's padded image (the rows and columns the windows reach)
 * in QPAD_BYTES. */
INLINE int qpad_takes(const qsrc *s, int64_t oh) {
  const int64_t ph = (oh - 1) * s->sh + (s->kh - 1) * s->dh + 1;
  const int64_t pw = (s->ow - 1) * s->sw + (s->kw - 1) * s->dw + 1;
  return !s->is_gemm && s->kh * s->kw > 1 && s->kh * s->kw <= QTAPS &&
         s->ow < QROW_MIN &&
         (s->pt > 0 || s->pl > 0 || ph > s->h + s->pt || pw > s->wd + s->pl) &&
         s->pt >= 0 && s->pl >= 0 && s->c * ph * pw <= QPAD_BYTES;
}

/* The source's shape once padded: the padded image, no padding left. */
INLINE void qpad_shape(qsrc *s, int64_t oh) {
  s->h = (oh - 1) * s->sh + (s->kh - 1) * s->dh + 1;
  s->wd = (s->ow - 1) * s->sw + (s->kw - 1) * s->dw + 1;
  s->pt = s->pl = 0;
}

/* Copies one group's channels at x (of the unpadded shape u) into buf in
 * the padded shape p, the padding as x_zp bytes; returns buf. */
INLINE const uint8_t *qpad_copy(const qsrc *u, const qsrc *p, const uint8_t *x,
                                uint8_t x_zp, uint8_t *buf) {
  uint8_t *d = buf;
  for (int64_t ci = 0; ci < u->c; ++ci)
    for (int64_t r = 0; r < p->h; ++r, d += p->wd) {
      const int64_t iy = r - u->pt;
      for (int64_t px = 0; px < p->wd; ++px) {
        const int64_t ix = px - u->pl;
        d[px] = iy >= 0 && iy < u->h && ix >= 0 && ix < u->wd
                    ? x[(ci * u->h + iy) * u->wd + ix]
                    : x_zp;
      }
    }
  return buf;
}

/* cuvil_k_qconv2d_packed_s8's loop over images and groups (source s,
 * output o set up for them) on padded copies (qpad_takes): a function of
 * its own, so that the buffer stays out of the usual path's frame (in it,
 * ResNet-8 on u74-mc ran 0.6% more instructions). */
STAGE void run_padded(qsrc s, qout o, const uint8_t *x, const int8_t *wp,
                      const int32_t *bias, const int32_t *rq, void *y,
                      const int64_t *geom, int64_t x_zp, int64_t p0) {
  uint8_t padded[QPAD_BYTES] __attribute__((aligned(16)));
  const int64_t group = geom[CUVIL_QCONV_GROUP], m = geom[CUVIL_QCONV_M];
  const int64_t c = geom[CUVIL_QCONV_C], hw = s.h * s.wd;
  const int64_t cg = s.c, mg = m / group, plane = o.ch_stride;
  const int64_t kp = (s.k + CUVIL_QKR - 1) / CUVIL_QKR * CUVIL_QKR;
  qsrc p = s;
  qpad_shape(&p, geom[CUVIL_QCONV_OH]);
  for (int64_t b = 0; b < geom[CUVIL_QCONV_N]; ++b)
    for (int64_t g = 0; g < group; ++g) {
      p.x = qpad_copy(&s, &p, x + (b * c + g * cg) * hw, (uint8_t)x_zp, padded);
      o.wp = wp + g * mg * kp;
      o.bias = bias + g * mg;
      o.rq = rq + 2 * g * mg;
      o.y = (uint8_t *)y + (b * m + g * mg) * plane;
      run_all(&p, &o, p0);
    }
}

#endif
