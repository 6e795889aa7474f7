/*
 * Reset entry for Cortex-A78 class cores (tested on QEMU virt, cortex-a76).
 *
 * Only core 0 (MPIDR affinity 0.0.0.0) boots; any other core parks. Other
 * cores join later as team members (cuvil/team.h): cores.c powers them on
 * through PSCI at cuvil_core_entry, below. The
 * image may be entered at EL3, EL2 or EL1 (QEMU virt: EL3 with secure=on,
 * EL2 with virtualization=on, EL1 otherwise). Each higher EL hands the
 * lower ones a trap-free AArch64 configuration and erets one level down,
 * back into the EL dispatcher, until the program runs at non-secure EL1.
 *
 * At EL1: stack, exception vectors, FP/SIMD, MMU and caches (mmu.S),
 * .data and .bss, UART, PMU, static constructors, then main; main's return
 * value goes to semihosting SYS_EXIT.
 */

/* SCR_EL3: lower ELs AArch64 (RW), non-secure (NS); bits 4 and 5 are RES1. */
#define SCR_EL3_VALUE     ((1 << 10) | (1 << 5) | (1 << 4) | (1 << 0))
/* HCR_EL2: EL1 is AArch64 (RW); no stage-2 translation, no traps. */
#define HCR_EL2_VALUE     (1 << 31)
/* CPTR_EL2 (E2H = 0): RES1 bits 13:12 and 9:0; TFP (bit 10) = 0 so
 * FP/SIMD does not trap to EL2. */
#define CPTR_EL2_VALUE    0x33ff
/* CNTHCTL_EL2: EL1PCTEN | EL1PCEN, the physical counter and timer stay
 * accessible from EL1. */
#define CNTHCTL_EL2_VALUE 0x3
/* SPSR for eret: target EL with its own stack pointer, DAIF masked. */
#define SPSR_EL1H         0x3c5
#define SPSR_EL2H         0x3c9
/* SCTLR_EL1 with the MMU and caches off: RES1 bits 29, 28, 23, 22, 20 and
 * 11 (ARMv8.0 encoding), SA (bit 3, stack alignment check); little-endian,
 * no alignment check for ordinary loads and stores. */
#define SCTLR_EL1_LO      0x0808
#define SCTLR_EL1_HI      0x30d0
/* CPACR_EL1.FPEN = 0b11: FP/SIMD does not trap at EL1 or EL0. */
#define CPACR_EL1_FPEN    (3 << 20)

/* The EL1 state every core starts from (clobbers x0): a known SCTLR_EL1
 * (MMU and caches off until mmu.S turns them on), the exception vectors,
 * FP/SIMD without traps. */
.macro el1_state
    mov x0, #SCTLR_EL1_LO
    movk x0, #SCTLR_EL1_HI, lsl #16
    msr sctlr_el1, x0
    isb
    adrp x0, cuvil_vectors
    add x0, x0, :lo12:cuvil_vectors
    msr vbar_el1, x0
    mov x0, #CPACR_EL1_FPEN
    msr cpacr_el1, x0
    isb
.endm

    .section .text.cuvil.boot, "ax", %progbits
    .globl _start
    .type _start, %function
_start:
    mrs x0, mpidr_el1
    tst x0, #0xffffff               /* Aff2, Aff1, Aff0 */
    b.ne cuvil_port_halt
    tst x0, #0xff00000000           /* Aff3 */
    b.ne cuvil_port_halt

el_dispatch:
    mrs x0, CurrentEL
    cmp x0, #(3 << 2)
    b.eq from_el3
    cmp x0, #(2 << 2)
    b.eq from_el2
    b at_el1

from_el3:
    mov x0, #SCR_EL3_VALUE
    msr scr_el3, x0
    msr cptr_el3, xzr               /* no FP/SIMD or sysreg traps to EL3 */
    msr mdcr_el3, xzr               /* no debug/PMU traps; NS may count */
    /* Next: EL2 if implemented (ID_AA64PFR0_EL1.EL2 != 0), else EL1. */
    mrs x0, id_aa64pfr0_el1
    ubfx x0, x0, #8, #4
    mov x1, #SPSR_EL1H
    cbz x0, 1f
    mov x1, #SPSR_EL2H
1:  msr spsr_el3, x1
    adr x0, el_dispatch
    msr elr_el3, x0
    eret

from_el2:
    mov x0, #HCR_EL2_VALUE
    msr hcr_el2, x0
    mov x0, #CPTR_EL2_VALUE
    msr cptr_el2, x0
    /* MDCR_EL2: HPMN = PMCR_EL0.N, all event counters belong to EL1/EL0;
     * no PMU or debug traps to EL2. */
    mrs x0, pmcr_el0
    ubfx x0, x0, #11, #5
    msr mdcr_el2, x0
    mov x0, #CNTHCTL_EL2_VALUE
    msr cnthctl_el2, x0
    msr cntvoff_el2, xzr
    mov x0, #SPSR_EL1H
    msr spsr_el2, x0
    adr x0, at_el1
    msr elr_el2, x0
    eret

at_el1:
    el1_state
    adrp x0, __cuvil_stack_top
    add x0, x0, :lo12:__cuvil_stack_top
    mov sp, x0

    /* Before this, data accesses are Device-nGnRnE: no unaligned access
     * and no C code. */
    bl cuvil_mmu_enable

    /* .data: copy from its load address when that differs from its run
     * address (an image linked for flash). The linker script aligns both
     * ends and the load address to 8 bytes. */
    adrp x0, __data_start
    add x0, x0, :lo12:__data_start
    adrp x1, __data_end
    add x1, x1, :lo12:__data_end
    adrp x2, __data_load
    add x2, x2, :lo12:__data_load
    cmp x0, x2
    b.eq 2f
1:  cmp x0, x1
    b.hs 2f
    ldr x3, [x2], #8
    str x3, [x0], #8
    b 1b

    /* .bss (8-byte aligned ends). */
2:  adrp x0, __bss_start
    add x0, x0, :lo12:__bss_start
    adrp x1, __bss_end
    add x1, x1, :lo12:__bss_end
3:  cmp x0, x1
    b.hs 4f
    str xzr, [x0], #8
    b 3b

4:  bl cuvil_uart_init
    bl cuvil_counters_init

    /* Static constructors (.preinit_array, .init_array), in order. */
    adrp x19, __init_array_start
    add x19, x19, :lo12:__init_array_start
    adrp x20, __init_array_end
    add x20, x20, :lo12:__init_array_end
5:  cmp x19, x20
    b.hs 6f
    ldr x0, [x19], #8
    blr x0
    b 5b

6:  bl main
    b cuvil_port_exit               /* w0 = main's return value */
    .size _start, . - _start

/* void cuvil_port_halt(void): wfe forever with all exceptions masked. */
    .section .text.cuvil.halt, "ax", %progbits
    .globl cuvil_port_halt
    .type cuvil_port_halt, %function
cuvil_port_halt:
    msr daifset, #0xf
1:  wfe
    b 1b
    .size cuvil_port_halt, . - cuvil_port_halt

/* void cuvil_core_entry(void): a core powered on by PSCI CPU_ON (cores.c),
 * at EL1 with the MMU off and x0 = its core number (the context id). The
 * boot core's EL1 set-up minus the memory initialisation (el1_state, the
 * same identity map), then entry(core) on the mailbox's stack. cores.c
 * cleaned the mailbox to memory, which is what a core reads with its MMU
 * off. */
    .section .text.cuvil.core_entry, "ax", %progbits
    .globl cuvil_core_entry
    .type cuvil_core_entry, %function
cuvil_core_entry:
    mov x19, x0
    el1_state
    adrp x20, cuvil_core_mailbox
    add x20, x20, :lo12:cuvil_core_mailbox
    add x20, x20, x19, lsl #4       /* 16-byte mailboxes */
    ldr x0, [x20, #8]
    mov sp, x0
    bl cuvil_mmu_enable
    ldr x1, [x20]
    mov x0, x19
    blr x1
    b cuvil_port_halt               /* entry does not return */
    .size cuvil_core_entry, . - cuvil_core_entry
