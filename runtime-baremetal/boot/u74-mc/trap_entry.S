/*
 * M-mode trap entry (mtvec, direct mode) of the u74-mc boot code.
 *
 * Saves x1..x31 on the current stack and hands them to cuvil_trap_report,
 * which prints a dump and exits. One trap is resumed instead: the ebreak
 * of cuvil_semihost_call when no debugger or emulator handles semihosting.
 * That call then returns -1, so cuvil_port_exit can park and the file
 * functions can fail cleanly on a board without a debugger.
 */

#define FRAME_SIZE         (32 * 8)     /* x0..x31, 16-byte multiple */
#define CAUSE_BREAKPOINT   3
#define MSTATUS_FS_INITIAL (1 << 13)

    .section .text.cuvil.trap, "ax", @progbits
    .globl cuvil_trap_entry
    .type cuvil_trap_entry, @function
    .balign 4
cuvil_trap_entry:
    addi sp, sp, -FRAME_SIZE
    .irp n, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
    sd x\n, (\n * 8)(sp)
    .endr
    sd zero, 0(sp)                  /* x0 */
    addi t0, sp, FRAME_SIZE
    sd t0, (2 * 8)(sp)              /* x2: sp before the trap */

    /* Unanswered semihosting call? mcause = breakpoint at its ebreak. */
    csrr t0, mcause
    li t1, CAUSE_BREAKPOINT
    bne t0, t1, 1f
    csrr t0, mepc
    lla t1, cuvil_semihost_trap
    bne t0, t1, 1f
    /* Resume after "ebreak; srai x0, x0, 7" with a0 = -1. */
    addi t0, t0, 8
    csrw mepc, t0
    ld t0, (5 * 8)(sp)
    ld t1, (6 * 8)(sp)
    li a0, -1
    addi sp, sp, FRAME_SIZE
    mret

    /* The report is C and printf handles doubles: FP instructions must not
     * trap, even when this trap came before start.S enabled the FPU. */
1:  li t0, MSTATUS_FS_INITIAL
    csrs mstatus, t0
    mv a0, sp
    call cuvil_trap_report          /* does not return */
    .size cuvil_trap_entry, . - cuvil_trap_entry
