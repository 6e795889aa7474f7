/* The foreign firmware's data: the model input and ONNX Runtime's output,
 * raw float32 files named by -DINPUT_FILE and -DEXPECTED_FILE. */
    .section .rodata.fw_data, "a"
    .balign 64
    .globl fw_input, fw_input_end, fw_expected, fw_expected_end
fw_input:
    .incbin INPUT_FILE
fw_input_end:
    .balign 64
fw_expected:
    .incbin EXPECTED_FILE
fw_expected_end:
