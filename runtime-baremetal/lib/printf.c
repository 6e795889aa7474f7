/*
 * printf-lite for the freestanding runtime: console output of
 * cuvil_printf, formatted straight to cuvil_port_putc without buffers in
 * memory beyond a few dozen bytes of stack. No libc and no libm.
 *
 * Supported: %d %i %u %x %X %s %c %p %% %f %e, the l/ll/z length
 * modifiers, a field width with the '0' (zero padding) and '-' (left
 * alignment) flags, and a precision for %f/%e (default 6, at most 17).
 * Floating point is formatted by scaling into 64-bit integers. %f rounds
 * correctly (as glibc does) up to 15 decimals; %e, which first scales by
 * powers of ten, can differ from glibc in the last digit for a few values
 * in a million, and more often beyond 15 significant digits. %f values of
 * 1e19 and above are printed in %e style.
 */
#include <cuvil/port.h>

enum length { LENGTH_INT, LENGTH_LONG, LENGTH_LONG_LONG, LENGTH_SIZE };

struct spec {
  int width;
  int precision; /* -1: none given */
  int left;      /* '-' flag */
  int zero;      /* '0' flag */
  enum length length;
};

#define MAX_PRECISION 17
#define DEFAULT_PRECISION 6
/* Longest conversion text: %f of 1e19 - 1 with 17 decimals, or "-" plus
 * 64 bits in decimal. */
#define BUFFER_SIZE 48

void cuvil_port_puts(const char *s) {
  while (*s != '\0')
    cuvil_port_putc(*s++);
}

static void put_repeated(char c, int count) {
  for (; count > 0; count--)
    cuvil_port_putc(c);
}

/* Write prefix (a sign, or "0x") and body, padded to the field width:
 * zeros go between prefix and body, spaces before or after both. */
static void put_field(const struct spec *spec, const char *prefix,
                      const char *body, int body_length) {
  int prefix_length = 0;
  while (prefix[prefix_length] != '\0')
    prefix_length++;
  const int padding = spec->width - prefix_length - body_length;
  if (!spec->left && !spec->zero)
    put_repeated(' ', padding);
  cuvil_port_puts(prefix);
  if (!spec->left && spec->zero)
    put_repeated('0', padding);
  for (int i = 0; i < body_length; i++)
    cuvil_port_putc(body[i]);
  if (spec->left)
    put_repeated(' ', padding);
}

/* Digits of v in base 10 or 16, written backwards ending just before
 * `end`; returns the number of digits (at least one). */
static int format_unsigned(char *end, uint64_t v, unsigned base, int upper) {
  const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char *p = end;
  do {
    *--p = digits[v % base];
    v /= base;
  } while (v != 0);
  return (int)(end - p);
}

/* Exactly `count` decimal digits of v, zero-filled on the left. */
static char *put_digits(char *out, uint64_t v, int count) {
  for (int i = count - 1; i >= 0; i--) {
    out[i] = (char)('0' + v % 10);
    v /= 10;
  }
  return out + count;
}

static const double powers_of_ten[MAX_PRECISION + 1] = {
    1e0, 1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
    1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17,
};

/* Split v (0 <= v < 1e19) into integer and fraction parts, the fraction
 * rounded to `precision` decimal digits, ties to even as glibc does. */
static void split_fixed(double v, int precision, uint64_t *integer,
                        uint64_t *fraction) {
  const uint64_t scale = (uint64_t)powers_of_ten[precision];
  uint64_t ip = (uint64_t)v;
  const double fraction_part = v - (double)ip; /* exact */
  const double scaled = fraction_part * powers_of_ten[precision];
  /* The product's rounding error, exactly (one fused multiply-add): when
   * the rounded product ends in exactly .5, it tells whether the true
   * value lies above, below or on the tie. */
  const double error =
      __builtin_fma(fraction_part, powers_of_ten[precision], -scaled);
  uint64_t fp = (uint64_t)scaled;
  const double rest = scaled - (double)fp;
  const uint64_t last_digit = precision > 0 ? fp : ip;
  if (rest > 0.5 ||
      (rest == 0.5 && (error > 0 || (error == 0 && (last_digit & 1) != 0))))
    fp++;
  if (fp == scale) { /* rounding carried into the integer part */
    fp = 0;
    ip++;
  }
  *integer = ip;
  *fraction = fp;
}

/* Integer part, then '.' and `precision` fraction digits if any. */
static char *put_fixed(char *out, uint64_t integer, uint64_t fraction,
                       int precision) {
  char digits[20];
  const int count = format_unsigned(digits + sizeof digits, integer, 10, 0);
  for (int i = 0; i < count; i++)
    *out++ = digits[sizeof digits - count + i];
  if (precision > 0) {
    *out++ = '.';
    out = put_digits(out, fraction, precision);
  }
  return out;
}

/* d.ddde+XX for finite v >= 0; returns the text length. */
static int format_exponent(char *buf, double v, int precision) {
  /* Scale v into [1, 10): divide by the steps while v is too large,
   * multiply while it is too small. Binary powers of ten keep it to at most
   * nine roundings, even for 1e300 or 1e-300. */
  static const double steps[] = {1e256, 1e128, 1e64, 1e32, 1e16,
                                 1e8,   1e4,   1e2,  1e1};
  static const int step_exponents[] = {256, 128, 64, 32, 16, 8, 4, 2, 1};
  int exponent = 0;
  if (v != 0.0) {
    for (int i = 0; i < 9; i++) {
      if (v >= steps[i]) {
        v /= steps[i];
        exponent += step_exponents[i];
      } else if (v * steps[i] < 10.0) {
        v *= steps[i];
        exponent -= step_exponents[i];
      }
    }
    /* Rounding in the scaling can leave v just outside [1, 10). */
    if (v >= 10.0) {
      v /= 10.0;
      exponent++;
    } else if (v < 1.0) {
      v *= 10.0;
      exponent--;
    }
  }
  uint64_t integer, fraction;
  split_fixed(v, precision, &integer, &fraction);
  if (integer == 10) { /* 9.99... rounded up to 10 */
    integer = 1;
    exponent++;
  }
  char *out = put_fixed(buf, integer, fraction, precision);
  *out++ = 'e';
  *out++ = exponent < 0 ? '-' : '+';
  const int magnitude = exponent < 0 ? -exponent : exponent;
  out = put_digits(out, (uint64_t)magnitude, magnitude >= 100 ? 3 : 2);
  return (int)(out - buf);
}

static void put_double(const struct spec *spec, char conversion, double v) {
  const char *sign = __builtin_signbit(v) ? "-" : "";
  if (__builtin_isnan(v) || __builtin_isinf(v)) {
    struct spec space_padded = *spec; /* "  inf", never "00inf" */
    space_padded.zero = 0;
    put_field(&space_padded, sign, __builtin_isnan(v) ? "nan" : "inf", 3);
    return;
  }
  if (v < 0)
    v = -v;
  int precision = spec->precision < 0 ? DEFAULT_PRECISION : spec->precision;
  if (precision > MAX_PRECISION)
    precision = MAX_PRECISION;

  char buf[BUFFER_SIZE];
  int length;
  if (conversion == 'f' && v < 1e19) {
    uint64_t integer, fraction;
    split_fixed(v, precision, &integer, &fraction);
    length = (int)(put_fixed(buf, integer, fraction, precision) - buf);
  } else {
    length = format_exponent(buf, v, precision);
  }
  put_field(spec, sign, buf, length);
}

static void put_integer(const struct spec *spec, char conversion,
                        __builtin_va_list *args) {
  uint64_t magnitude;
  const char *prefix = "";
  if (conversion == 'd' || conversion == 'i') {
    int64_t value;
    switch (spec->length) {
    case LENGTH_LONG: value = __builtin_va_arg(*args, long); break;
    case LENGTH_LONG_LONG: value = __builtin_va_arg(*args, long long); break;
    case LENGTH_SIZE: /* %zd: the signed type of size_t's width */
      value = __builtin_va_arg(*args, intptr_t);
      break;
    default: value = __builtin_va_arg(*args, int); break;
    }
    /* Negate in unsigned arithmetic: correct for INT64_MIN too. */
    magnitude = value < 0 ? 0 - (uint64_t)value : (uint64_t)value;
    if (value < 0)
      prefix = "-";
  } else {
    switch (spec->length) {
    case LENGTH_LONG: magnitude = __builtin_va_arg(*args, unsigned long); break;
    case LENGTH_LONG_LONG:
      magnitude = __builtin_va_arg(*args, unsigned long long);
      break;
    case LENGTH_SIZE: magnitude = __builtin_va_arg(*args, size_t); break;
    default: magnitude = __builtin_va_arg(*args, unsigned int); break;
    }
  }
  char buf[BUFFER_SIZE];
  const unsigned base = conversion == 'x' || conversion == 'X' ? 16 : 10;
  const int length =
      format_unsigned(buf + sizeof buf, magnitude, base, conversion == 'X');
  put_field(spec, prefix, buf + sizeof buf - length, length);
}

void cuvil_printf(const char *fmt, ...) {
  __builtin_va_list args;
  __builtin_va_start(args, fmt);
  while (*fmt != '\0') {
    if (*fmt != '%') {
      cuvil_port_putc(*fmt++);
      continue;
    }
    const char *start = fmt++;
    struct spec spec = {0, -1, 0, 0, LENGTH_INT};
    for (;; fmt++) {
      if (*fmt == '-')
        spec.left = 1;
      else if (*fmt == '0')
        spec.zero = 1;
      else
        break;
    }
    for (; *fmt >= '0' && *fmt <= '9'; fmt++)
      spec.width = spec.width * 10 + (*fmt - '0');
    if (*fmt == '.') {
      spec.precision = 0;
      for (fmt++; *fmt >= '0' && *fmt <= '9'; fmt++)
        spec.precision = spec.precision * 10 + (*fmt - '0');
    }
    if (*fmt == 'l') {
      fmt++;
      spec.length = LENGTH_LONG;
      if (*fmt == 'l') {
        fmt++;
        spec.length = LENGTH_LONG_LONG;
      }
    } else if (*fmt == 'z') {
      fmt++;
      spec.length = LENGTH_SIZE;
    }

    const char conversion = *fmt;
    switch (conversion) {
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X': put_integer(&spec, conversion, &args); break;
    case 'f':
    case 'e':
      put_double(&spec, conversion, __builtin_va_arg(args, double));
      break;
    case 's': {
      const char *s = __builtin_va_arg(args, const char *);
      if (s == NULL)
        s = "(null)";
      int length = 0;
      while (s[length] != '\0')
        length++;
      put_field(&spec, "", s, length);
      break;
    }
    case 'c': {
      const char c = (char)__builtin_va_arg(args, int);
      put_field(&spec, "", &c, 1);
      break;
    }
    case 'p': {
      char buf[BUFFER_SIZE];
      const uintptr_t p = (uintptr_t)__builtin_va_arg(args, void *);
      const int length = format_unsigned(buf + sizeof buf, p, 16, 0);
      put_field(&spec, "0x", buf + sizeof buf - length, length);
      break;
    }
    case '%': cuvil_port_putc('%'); break;
    default:
      /* Unsupported or truncated conversion: print it as written. */
      while (start < fmt)
        cuvil_port_putc(*start++);
      if (conversion == '\0')
        continue;
      cuvil_port_putc(conversion);
      break;
    }
    fmt++;
  }
  __builtin_va_end(args);
}
