/*
 * Startup of the foreign test firmware (tests/e2e/foreign_firmware.py) for
 * QEMU sifive_u: a program written without cuvil's runtime, as a firmware
 * team would have one. Hart 1 (the first U core; hart 0 is the E51
 * monitor core, which has no FPU) runs fw_main; every other hart parks.
 * fw_main's return value is the exit status (semihosting SYS_EXIT).
 */
    .section .text.fw_start, "ax", @progbits
    .globl _start
_start:
    csrr t0, mhartid
    li t1, 1
    bne t0, t1, park
    lla sp, fw_stack_top
    li t0, (1 << 13)            /* mstatus.FS = Initial: FPU on */
    csrs mstatus, t0
    csrw fcsr, zero
    lla t0, fw_bss_start
    lla t1, fw_bss_end
1:  bgeu t0, t1, 2f
    sd zero, 0(t0)
    addi t0, t0, 8
    j 1b
2:  call fw_main
    /* SYS_EXIT (0x18) with {ADP_Stopped_ApplicationExit, status}. */
    lla a1, exit_block
    li t0, 0x20026
    sd t0, 0(a1)
    sd a0, 8(a1)
    li a0, 0x18
    call fw_semihost
park:
    wfi
    j park

/* long fw_semihost(long op, void *arg): the RISC-V semihosting sequence,
 * uncompressed and within one page. */
    .balign 16
    .globl fw_semihost
fw_semihost:
    .option push
    .option norvc
    slli zero, zero, 0x1f
    ebreak
    srai zero, zero, 7
    .option pop
    ret

    .section .bss.fw_exit, "aw", @nobits
    .balign 8
exit_block:
    .zero 16
