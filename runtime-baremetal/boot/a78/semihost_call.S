/*
 * intptr_t cuvil_semihost_call(uintptr_t op, void *param)
 *
 * AArch64 semihosting: w0 = operation, x1 = parameter block, result in x0,
 * trap instruction "hlt #0xf000". vectors.S finds the hlt by the
 * cuvil_semihost_trap label.
 */

    .section .text.cuvil.semihost, "ax", %progbits
    .globl cuvil_semihost_call
    .globl cuvil_semihost_trap
    .type cuvil_semihost_call, %function
cuvil_semihost_call:
cuvil_semihost_trap:
    hlt #0xf000
    ret
    .size cuvil_semihost_call, . - cuvil_semihost_call
