/* Links the raw input image and the reference output into the firmware.
 * INPUT_FILE and REF_FILE are set by the Makefile (-DINPUT_FILE="path"). */
  .section .rodata.example_input, "a"
  .balign 64
  .globl example_input
example_input:
  .incbin INPUT_FILE
  .globl example_input_end
example_input_end:

  .section .rodata.example_ref, "a"
  .balign 64
  .globl example_ref
example_ref:
  .incbin REF_FILE
  .globl example_ref_end
example_ref_end:
  .section .note.GNU-stack, "", %progbits
