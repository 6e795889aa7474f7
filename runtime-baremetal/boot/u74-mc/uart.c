/*
 * Console on the SiFive UART0 (FU740 and QEMU sifive_u, 0x10010000).
 *
 * Only the transmitter is used. The baud-rate divisor (div, +0x18) depends
 * on the tlclk frequency set up by the first boot stage and is left as that
 * stage programmed it; QEMU ignores it.
 */
#include <cuvil/port.h>

#include "boot.h"

#define UART0_BASE 0x10010000u
#define UART_TXDATA 0x00u /* write: byte to send; read: bit 31 = FIFO full */
#define UART_TXCTRL 0x08u /* bit 0: transmit enable */

#define TXDATA_FULL (1u << 31)
#define TXCTRL_TXEN (1u << 0)

static volatile uint32_t *uart_reg(uint32_t offset) {
  return (volatile uint32_t *)(uintptr_t)(UART0_BASE + offset);
}

void cuvil_uart_init(void) { *uart_reg(UART_TXCTRL) |= TXCTRL_TXEN; }

static void uart_write(char c) {
  while (*uart_reg(UART_TXDATA) & TXDATA_FULL) {
  }
  *uart_reg(UART_TXDATA) = (uint8_t)c;
}

void cuvil_port_putc(char c) {
  if (c == '\n')
    uart_write('\r');
  uart_write(c);
}
