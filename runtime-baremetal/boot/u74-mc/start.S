/*
 * Reset entry for the SiFive U74-MC (FU740) and QEMU's sifive_u machine.
 *
 * Every hart enters _start at the same time, in M-mode, with interrupts
 * off and no stack. Hart 0 is the E51/S7 monitor core (RV64IMAC, no FPU);
 * harts 1..4 are the U74 application cores. Hart 1 boots the program,
 * harts 2..4 wait until cores.c starts them as team members (cuvil/team.h)
 * and every other hart parks in a wfi loop.
 *
 * The boot hart sets up gp, sp and the trap vector, enables the FPU and
 * the counters, initialises .data, .bss and the UART, runs the static
 * constructors, calls main and exits through semihosting with main's
 * return value.
 */

#define BOOT_HART 1

#define MSTATUS_MIE        (1 << 3)
#define MIE_MSIE           (1 << 3)
#define MIP_MSIP           (1 << 3)
#define CLINT_MSIP         0x2000000
#define TEAM_LAST_HART     (BOOT_HART + 3) /* CUVIL_TEAM_MAX - 1 members */
#define MAILBOX_SHIFT      5               /* sizeof(cuvil_core_mailbox_t) */
#define MSTATUS_FS_INITIAL (1 << 13)

    .section .text.cuvil.boot, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    /* Machine interrupts off: reset clears mstatus.MIE, but a debugger or
     * an earlier boot stage may have left it set. */
    csrci mstatus, MSTATUS_MIE
    csrw mie, zero

    csrr t0, mhartid
    li t1, BOOT_HART
    bltu t0, t1, park_hart
    bne t0, t1, wait_for_start

    /* gp anchors the linker's gp-relative relaxation of small data; this
     * one load must itself stay unrelaxed. */
    .option push
    .option norelax
    lla gp, __global_pointer$
    .option pop

    lla sp, __cuvil_stack_top

    /* Direct-mode trap vector (mtvec needs 4-byte alignment). */
    lla t0, cuvil_trap_entry
    csrw mtvec, t0

    /* FPU on: mstatus.FS = Initial; fcsr = 0 (round to nearest even, no
     * exception flags). Until FS is non-zero every FP instruction is
     * illegal. */
    li t0, MSTATUS_FS_INITIAL
    csrs mstatus, t0
    csrw fcsr, zero

    /* mcycle and minstret count in every privilege mode. */
    csrw mcountinhibit, zero

    /* .data: copy from its load address when that differs from its run
     * address (an image linked for flash). The linker script aligns both
     * ends and the load address to 8 bytes. */
    lla t0, __data_start
    lla t1, __data_end
    lla t2, __data_load
    beq t0, t2, 2f
1:  bgeu t0, t1, 2f
    ld t3, 0(t2)
    sd t3, 0(t0)
    addi t0, t0, 8
    addi t2, t2, 8
    j 1b

    /* .bss (8-byte aligned ends). */
2:  lla t0, __bss_start
    lla t1, __bss_end
3:  bgeu t0, t1, 4f
    sd zero, 0(t0)
    addi t0, t0, 8
    j 3b

4:  call cuvil_uart_init

    /* Static constructors (.preinit_array, .init_array), in order. */
    lla s0, __init_array_start
    lla s1, __init_array_end
5:  bgeu s0, s1, 6f
    ld t0, 0(s0)
    jalr t0
    addi s0, s0, 8
    j 5b

6:  call main
    tail cuvil_port_exit            /* a0 = main's return value */

    /* Harts 2..4: wfi until cores.c raises this hart's msip with its
     * mailbox filled (a zero entry is a spurious wake-up), then the same
     * set-up as the boot hart minus the memory initialisation, and
     * entry(core) on the mailbox's stack. Member code waits with wfi on
     * msip too, so MSIE stays enabled (mstatus.MIE stays 0: no trap). */
wait_for_start:
    li t1, TEAM_LAST_HART
    bgtu t0, t1, park_hart
    lla t1, cuvil_port_halt
    csrw mtvec, t1
    li t1, MIE_MSIE
    csrw mie, t1
    li t2, CLINT_MSIP
    slli t1, t0, 2
    add t2, t2, t1                  /* t2 = this hart's msip word */
    lla t3, cuvil_core_mailbox
    slli t1, t0, MAILBOX_SHIFT
    add t3, t3, t1                  /* t3 = this hart's mailbox */
1:  wfi
    csrr t1, mip
    andi t1, t1, MIP_MSIP
    beqz t1, 1b
    sw zero, 0(t2)
    fence rw, rw
    ld t4, 0(t3)                    /* entry */
    beqz t4, 1b
    fence r, rw                     /* the entry's load acquires the rest */
    ld sp, 8(t3)
    ld a0, 16(t3)
    .option push
    .option norelax
    lla gp, __global_pointer$
    .option pop
    lla t1, cuvil_trap_entry
    csrw mtvec, t1
    li t1, MSTATUS_FS_INITIAL
    csrs mstatus, t1
    csrw fcsr, zero
    csrw mcountinhibit, zero
    jalr t4
    j park_hart                     /* entry does not return */

    /* Other harts: any trap they might take lands in the park loop too. */
park_hart:
    lla t0, cuvil_port_halt
    csrw mtvec, t0
    j cuvil_port_halt
    .size _start, . - _start

/* void cuvil_port_halt(void): wfi forever with interrupts masked. Also the
 * trap vector of the parked harts, hence the 4-byte alignment. */
    .section .text.cuvil.halt, "ax", @progbits
    .globl cuvil_port_halt
    .type cuvil_port_halt, @function
    .balign 4
cuvil_port_halt:
    csrci mstatus, MSTATUS_MIE
1:  wfi
    j 1b
    .size cuvil_port_halt, . - cuvil_port_halt
