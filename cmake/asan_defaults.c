/* AddressSanitizer's run-time defaults for the programs of the sanitized
 * build (cmake/Sanitize.cmake links this into each of them); ASAN_OPTIONS
 * still overrides them.
 *
 * A freed block waits in a 32 MB quarantine before its memory is reused
 * (the default is 256 MB), and a report shows 10 frames of where a block
 * was allocated and freed (the default 30). Both defaults are sized for
 * long-running servers: on cuvilc's short runs they doubled the system
 * time (page faults in the quarantine) and cost 18 to 60% more CPU time
 * on a MobileNet-class build (docs/robustness.md), while a use after free
 * is still caught for the next 32 MB of frees. */
__attribute__((used)) const char *__asan_default_options(void) {
  return "quarantine_size_mb=32:malloc_context_size=10";
}
