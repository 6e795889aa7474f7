/*
 * void cuvil_mmu_enable(void): identity map and caches for EL1.
 *
 * 4 KiB granule, 32-bit (4 GiB) input addresses, so the walk starts at
 * level 1 with four 1 GiB block entries:
 *     0x0000_0000 - 0x3fff_ffff  Device-nGnRnE, never executable
 *                                (QEMU virt: flash, GIC, UART, virtio)
 *     0x4000_0000 - 0xffff_ffff  Normal, write-back cacheable,
 *                                inner shareable (RAM from 1 GiB up)
 * Called from start.S at EL1 with the MMU off, before any C code: with the
 * MMU off every data access is Device-nGnRnE, where unaligned accesses
 * fault and nothing is cached.
 */

/* MAIR_EL1: Attr0 = 0x00 Device-nGnRnE; Attr1 = 0xff Normal, inner and
 * outer write-back, read/write-allocate, non-transient. */
#define MAIR_VALUE   0xff00

/* TCR_EL1 (lower and upper halfword):
 *   T0SZ = 32 (bits 5:0)       4 GiB of VA through TTBR0
 *   IRGN0 = ORGN0 = 0b01       walks are write-back write-allocate cached
 *   SH0 = 0b11                 walks are inner shareable
 *   TG0 = 0b00                 4 KiB granule
 *   T1SZ = 32, EPD1 = 1        no TTBR1 walks (upper VA range faults)
 *   IPS = 0b000                32-bit physical addresses */
#define TCR_LO       0x3520
#define TCR_HI       0x00a0

/* Level-1 block descriptors: valid block (0b01), AttrIndx (bits 4:2),
 * SH (bits 9:8), AF (bit 10, set so the first access does not fault),
 * AP = 0b00 (EL1 read/write), PXN (bit 53), UXN (bit 54). */
#define BLOCK_DEVICE 0x0060000000000401 /* Attr0, PXN, UXN */
#define BLOCK_NORMAL 0x0040000000000705 /* Attr1, inner shareable, UXN */

/* SCTLR_EL1 bits set here: M (MMU), C (data cache), I (instruction cache). */
#define SCTLR_M      (1 << 0)
#define SCTLR_C      (1 << 2)
#define SCTLR_I      (1 << 12)

    .section .text.cuvil.mmu, "ax", %progbits
    .globl cuvil_mmu_enable
    .type cuvil_mmu_enable, %function
cuvil_mmu_enable:
    mov x0, #MAIR_VALUE
    msr mair_el1, x0
    mov x0, #TCR_LO
    movk x0, #TCR_HI, lsl #16
    msr tcr_el1, x0
    adrp x0, l1_table
    add x0, x0, :lo12:l1_table
    msr ttbr0_el1, x0
    isb

    /* Drop TLB entries and instruction-cache lines an earlier boot stage
     * may have left (the core invalidates its caches at reset; data written
     * with the MMU off went straight to memory). */
    tlbi vmalle1
    ic iallu
    dsb nsh
    isb

    mrs x0, sctlr_el1
    mov x1, #(SCTLR_M | SCTLR_C | SCTLR_I)
    orr x0, x0, x1
    msr sctlr_el1, x0
    isb
    ret
    .size cuvil_mmu_enable, . - cuvil_mmu_enable

    /* Translation tables are read by the walker, never written: constant
     * data. Fewer than 8 entries need 64-byte alignment. */
    .section .rodata.cuvil.mmu, "a", %progbits
    .balign 64
l1_table:
    .quad 0x00000000 + BLOCK_DEVICE
    .quad 0x40000000 + BLOCK_NORMAL
    .quad 0x80000000 + BLOCK_NORMAL
    .quad 0xc0000000 + BLOCK_NORMAL
