/* Reference Cast: element-wise conversion between the types of
 * CUVIL_CAST_TYPES, C conversion semantics (float to integer truncates;
 * anything to bool is x != 0). */
#include "cuvil/kernels.h"

#define CUVIL_ALIAS_TYPE(NAME, CTYPE)                                          \
  typedef CTYPE __attribute__((may_alias)) cuvil_cast_##NAME##_t;
CUVIL_CAST_TYPES(CUVIL_ALIAS_TYPE)

/* The conversion of one element to type TO. */
#define CUVIL_CONVERT_f32(v) ((float)(v))
#define CUVIL_CONVERT_f64(v) ((double)(v))
#define CUVIL_CONVERT_i8(v) ((int8_t)(v))
#define CUVIL_CONVERT_u8(v) ((uint8_t)(v))
#define CUVIL_CONVERT_i16(v) ((int16_t)(v))
#define CUVIL_CONVERT_u16(v) ((uint16_t)(v))
#define CUVIL_CONVERT_i32(v) ((int32_t)(v))
#define CUVIL_CONVERT_u32(v) ((uint32_t)(v))
#define CUVIL_CONVERT_i64(v) ((int64_t)(v))
#define CUVIL_CONVERT_u64(v) ((uint64_t)(v))
#define CUVIL_CONVERT_bool(v) ((uint8_t)((v) != 0))

#define CUVIL_CAST_DEF(FROM, FROMC, TO, TOC)                                   \
  void cuvil_k_cast_##FROM##_##TO(const void *x, void *y, int64_t n) {         \
    const cuvil_cast_##FROM##_t *s = x;                                        \
    cuvil_cast_##TO##_t *d = y;                                                \
    for (int64_t i = 0; i < n; ++i)                                            \
      d[i] = CUVIL_CONVERT_##TO(s[i]);                                         \
  }
CUVIL_CAST_PAIRS(CUVIL_CAST_DEF)

/* float32 <-> float16 / bfloat16, in integer arithmetic: round to nearest
 * even, NaN stays NaN, overflow becomes infinity. */
typedef union {
  float f;
  uint32_t u;
} cuvil_f32_bits_t;

static uint16_t f32_to_f16(float f) {
  cuvil_f32_bits_t b = {f};
  uint16_t sign = (uint16_t)((b.u >> 16) & 0x8000u);
  uint32_t ax = b.u & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return sign | 0x7e00u; /* NaN */
  if (ax >= 0x47800000u)
    return sign | 0x7c00u;         /* >= 65536: infinity */
  if (ax >= 0x38800000u) {         /* a normal float16 (>= 2^-14) */
    uint32_t m = ax - 0x38000000u; /* exponent rebiased from 127 to 15 */
    m += 0xfffu + ((m >> 13) & 1u);
    return sign | (uint16_t)(m >> 13); /* a carry may round up to infinity */
  }
  if (ax < 0x33000000u)
    return sign; /* below half the smallest subnormal (2^-25): zero */
  uint32_t e = ax >> 23, mant = (ax & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126u - e; /* value / 2^-24 = mant >> shift */
  uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1u);
  uint32_t half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u)))
    ++q;
  return sign | (uint16_t)q;
}

static float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  cuvil_f32_bits_t b;
  if (e == 0x1fu)
    b.u = sign | 0x7f800000u | (m << 13);
  else if (e != 0)
    b.u = sign | ((e + 112u) << 23) | (m << 13);
  else if (m == 0)
    b.u = sign;
  else { /* subnormal: normalise */
    e = 113u;
    while (!(m & 0x400u)) {
      m <<= 1;
      --e;
    }
    b.u = sign | (e << 23) | ((m & 0x3ffu) << 13);
  }
  return b.f;
}

static uint16_t f32_to_bf16(float f) {
  cuvil_f32_bits_t b = {f};
  if ((b.u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((b.u >> 16) | 0x40u); /* quiet NaN */
  return (uint16_t)((b.u + 0x7fffu + ((b.u >> 16) & 1u)) >> 16);
}

/* Truncation: what the ONNX reference did before opset 19. */
static uint16_t f32_to_bf16_trunc(float f) {
  cuvil_f32_bits_t b = {f};
  if ((b.u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((b.u >> 16) | 0x40u);
  return (uint16_t)(b.u >> 16);
}

static float bf16_to_f32(uint16_t h) {
  cuvil_f32_bits_t b;
  b.u = (uint32_t)h << 16;
  return b.f;
}

#define CUVIL_CAST_HALF(FROM, FROMC, TO, TOC, CONV)                            \
  void cuvil_k_cast_##FROM##_##TO(const void *x, void *y, int64_t n) {         \
    const cuvil_cast_##FROMC##_t *s = x;                                       \
    cuvil_cast_##TOC##_t *d = y;                                               \
    for (int64_t i = 0; i < n; ++i)                                            \
      d[i] = CONV(s[i]);                                                       \
  }
CUVIL_CAST_HALF(f32, f32, f16, u16, f32_to_f16)
CUVIL_CAST_HALF(f16, u16, f32, f32, f16_to_f32)
CUVIL_CAST_HALF(f32, f32, bf16, u16, f32_to_bf16)
CUVIL_CAST_HALF(f32, f32, bf16_trunc, u16, f32_to_bf16_trunc)
CUVIL_CAST_HALF(bf16, u16, f32, f32, bf16_to_f32)
