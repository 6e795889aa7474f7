/* Links a raw float32 image into the firmware as cnn_input[]. INPUT_FILE is
 * set by the build (-DINPUT_FILE="path"). Assembled with the firmware's own
 * flags, so the object's ABI attributes match the rest of the image. */
  .section .rodata.cnn_input, "a"
  .balign 64
  .globl cnn_input
cnn_input:
  .incbin INPUT_FILE
  .globl cnn_input_end
cnn_input_end:
  .section .note.GNU-stack, "", %progbits
