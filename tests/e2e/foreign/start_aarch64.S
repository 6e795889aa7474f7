/*
 * Startup of the foreign test firmware (tests/e2e/foreign_firmware.py) for
 * QEMU virt (entered at EL1): a program written without cuvil's runtime.
 * Core 0 turns on FP/SIMD and an identity-mapped MMU (vector code needs
 * Normal memory: with the MMU off every access is Device memory, where
 * unaligned accesses fault), clears .bss and runs fw_main; fw_main's
 * return value is the exit status (semihosting SYS_EXIT).
 */
    .section .text.fw_start, "ax", %progbits
    .globl _start
_start:
    mrs x0, mpidr_el1
    tst x0, #0xffffff
    b.ne park
    ldr x0, =fw_stack_top
    mov sp, x0
    mov x0, #(3 << 20)          /* CPACR_EL1.FPEN: no FP/SIMD traps */
    msr cpacr_el1, x0
    isb
    /* MAIR: attribute 0 Device-nGnRnE, attribute 1 Normal write-back. */
    mov x0, #0xff00
    msr mair_el1, x0
    /* TCR: 4 GiB of VA (T0SZ 32), walks cacheable and inner shareable,
     * 4 KiB granule, no TTBR1 walks (EPD1). */
    ldr x0, =(32 | (1 << 8) | (1 << 10) | (3 << 12) | (1 << 23))
    msr tcr_el1, x0
    adrp x0, fw_ttb
    msr ttbr0_el1, x0
    isb
    tlbi vmalle1
    dsb ish
    isb
    mrs x0, sctlr_el1
    orr x0, x0, #(1 << 0)       /* M: MMU on */
    orr x0, x0, #(1 << 2)       /* C: data cache */
    orr x0, x0, #(1 << 12)      /* I: instruction cache */
    bic x0, x0, #(1 << 1)       /* A: no alignment checks */
    msr sctlr_el1, x0
    isb
    ldr x0, =fw_bss_start
    ldr x1, =fw_bss_end
1:  cmp x0, x1
    b.hs 2f
    str xzr, [x0], #8
    b 1b
2:  bl fw_main
    /* SYS_EXIT (0x18) with {ADP_Stopped_ApplicationExit, status}. */
    ldr x1, =exit_block
    mov x2, #0x26
    movk x2, #0x2, lsl #16
    str x2, [x1]
    sxtw x0, w0
    str x0, [x1, #8]
    mov x0, #0x18
    bl fw_semihost
park:
    wfi
    b park

/* long fw_semihost(long op, void *arg) */
    .globl fw_semihost
fw_semihost:
    hlt #0xf000
    ret
    .ltorg

/* Level-1 translation table: 1 GiB blocks, identity. 0-1 GiB (the
 * devices) Device memory, 1-2 GiB (the RAM) Normal memory; both EL1 RW,
 * access flag set. Read-only data: the MMU reads it, nothing writes it. */
    .section .rodata.fw_ttb, "a", %progbits
    .balign 4096
fw_ttb:
    .quad 0x00000401
    .quad 0x40000000 | 0x705
    .quad 0
    .quad 0

    .section .bss.fw_exit, "aw", %nobits
    .balign 8
exit_block:
    .zero 16
