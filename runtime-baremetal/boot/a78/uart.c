/*
 * Console on the Arm PL011 UART of QEMU virt (0x09000000, UARTCLK 24 MHz).
 *
 * Only the transmitter is used. Initialisation follows the PL011 TRM:
 * disable, wait for the last character to leave, set the baud divisor and
 * line format, enable.
 */
#include <cuvil/port.h>

#include "boot.h"

#define PL011_BASE 0x09000000u
#define UART_DR 0x00u   /* data register */
#define UART_FR 0x18u   /* flag register */
#define UART_IBRD 0x24u /* integer baud divisor */
#define UART_FBRD 0x28u /* fractional baud divisor (1/64 units) */
#define UART_LCRH 0x2cu /* line control */
#define UART_CR 0x30u   /* control */

#define FR_BUSY (1u << 3)
#define FR_TXFF (1u << 5) /* transmit FIFO full */
#define LCRH_FEN (1u << 4)
#define LCRH_WLEN_8 (3u << 5)
#define CR_UARTEN (1u << 0)
#define CR_TXE (1u << 8)

/* 115200 baud from 24 MHz: 24e6 / (16 * 115200) = 13.02 -> 13 + 1/64. */
#define BAUD_IBRD 13u
#define BAUD_FBRD 1u

static volatile uint32_t *uart_reg(uint32_t offset) {
  return (volatile uint32_t *)(uintptr_t)(PL011_BASE + offset);
}

void cuvil_uart_init(void) {
  *uart_reg(UART_CR) = 0;
  while (*uart_reg(UART_FR) & FR_BUSY) {
  }
  *uart_reg(UART_IBRD) = BAUD_IBRD;
  *uart_reg(UART_FBRD) = BAUD_FBRD;
  /* 8 data bits, no parity, 1 stop bit, FIFOs on. Writing LCR_H also
   * latches the divisors. */
  *uart_reg(UART_LCRH) = LCRH_WLEN_8 | LCRH_FEN;
  *uart_reg(UART_CR) = CR_UARTEN | CR_TXE;
}

static void uart_write(char c) {
  while (*uart_reg(UART_FR) & FR_TXFF) {
  }
  *uart_reg(UART_DR) = (uint8_t)c;
}

void cuvil_port_putc(char c) {
  if (c == '\n')
    uart_write('\r');
  uart_write(c);
}
