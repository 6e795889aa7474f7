/*
 * intptr_t cuvil_semihost_call(uintptr_t op, void *param)
 *
 * RISC-V semihosting: a0 = operation, a1 = parameter block, result in a0.
 * The host recognises the call by the exact uncompressed sequence
 *     slli x0, x0, 0x1f; ebreak; srai x0, x0, 7
 * so it is assembled with compression off and aligned to 16 bytes, which
 * keeps all three instructions in one page. trap_entry.S finds the ebreak
 * by the cuvil_semihost_trap label.
 */

    .section .text.cuvil.semihost, "ax", @progbits
    .globl cuvil_semihost_call
    .globl cuvil_semihost_trap
    .type cuvil_semihost_call, @function
    .balign 16
cuvil_semihost_call:
    .option push
    .option norvc
    slli x0, x0, 0x1f
cuvil_semihost_trap:
    ebreak
    srai x0, x0, 7
    .option pop
    ret
    .size cuvil_semihost_call, . - cuvil_semihost_call
