/*
 * EL1 exception vector table (VBAR_EL1) of the a78 boot code.
 *
 * All 16 entries save x0..x30 and the interrupted sp in a frame on the
 * current stack and call cuvil_trap_report, which prints a dump and exits.
 * One exception is resumed instead: the hlt of cuvil_semihost_call when no
 * debugger or emulator handles semihosting (HLT is then an undefined
 * instruction, ESR_EL1.EC = 0). That call returns -1, so cuvil_port_exit
 * can park and the file functions can fail cleanly on a board without a
 * debugger.
 */

#define FRAME_SIZE      (32 * 8)        /* x0..x30, sp */
#define VECTOR_EL1_SYNC 4               /* current EL with SP_EL1, synchronous */
#define CPACR_EL1_FPEN  (3 << 20)       /* FP/SIMD does not trap at EL1/EL0 */

/* One table entry: 32 instructions at most (0x80 bytes). */
.macro vector index
    .balign 0x80
    sub sp, sp, #FRAME_SIZE
    stp x0, x1, [sp, #0]
    mov x0, #\index
    b save_and_report
.endm

    .section .text.cuvil.vectors, "ax", %progbits
    .globl cuvil_vectors
    .balign 2048                    /* VBAR_EL1 bits 10:0 are RES0 */
cuvil_vectors:
    vector 0                        /* current EL, SP_EL0: sync, IRQ, FIQ, SError */
    vector 1
    vector 2
    vector 3
    vector 4                        /* current EL, SP_EL1 */
    vector 5
    vector 6
    vector 7
    vector 8                        /* lower EL, AArch64 */
    vector 9
    vector 10
    vector 11
    vector 12                       /* lower EL, AArch32 */
    vector 13
    vector 14
    vector 15

save_and_report:
    stp x2, x3, [sp, #16]
    stp x4, x5, [sp, #32]
    stp x6, x7, [sp, #48]
    stp x8, x9, [sp, #64]
    stp x10, x11, [sp, #80]
    stp x12, x13, [sp, #96]
    stp x14, x15, [sp, #112]
    stp x16, x17, [sp, #128]
    stp x18, x19, [sp, #144]
    stp x20, x21, [sp, #160]
    stp x22, x23, [sp, #176]
    stp x24, x25, [sp, #192]
    stp x26, x27, [sp, #208]
    stp x28, x29, [sp, #224]
    add x1, sp, #FRAME_SIZE
    stp x30, x1, [sp, #240]         /* x30 and the interrupted sp */

    /* Unanswered semihosting call? EC 0 at its hlt, taken at EL1. */
    cmp x0, #VECTOR_EL1_SYNC
    b.ne 1f
    mrs x1, esr_el1
    lsr x1, x1, #26                 /* ESR_EL1.EC */
    cbnz x1, 1f
    mrs x1, elr_el1
    adrp x2, cuvil_semihost_trap
    add x2, x2, :lo12:cuvil_semihost_trap
    cmp x1, x2
    b.ne 1f
    /* Resume after the hlt with x0 = -1. */
    add x1, x1, #4
    msr elr_el1, x1
    ldp x1, x2, [sp, #8]
    mov x0, #-1
    add sp, sp, #FRAME_SIZE
    eret

    /* The report is C and printf handles doubles: FP/SIMD must not trap,
     * even when this exception came before start.S enabled it. */
1:  mov x1, #CPACR_EL1_FPEN
    msr cpacr_el1, x1
    isb
    mov x1, sp
    bl cuvil_trap_report            /* does not return */
