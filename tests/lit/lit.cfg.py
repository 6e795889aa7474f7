# lit configuration for cuvilc's command-line tests: each .test file runs
# the tool and checks its output and errors with FileCheck; each .cir file
# (passes/) runs cuvil-opt on the IR it holds.
import os

import lit.formats

config.name = "cuvilc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test", ".cir"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cuvil_binary_dir, "tests", "lit")

config.substitutions.append(("%cuvilc", config.cuvilc))
# Pass tests (passes/*.cir): cuvil-opt runs passes on textual IR.
config.substitutions.append(
    (r"(?<![\w/.-])cuvil-opt(?![\w/.-])", config.cuvil_opt))
config.substitutions.append(("%models", config.models_dir))
config.substitutions.append(("%llvm_bin", config.llvm_tools_dir))
config.substitutions.append(("%python", config.python3))
# What cuvilc keeps between runs (ir/CacheRoot.h: the compiled support
# code, board runtimes) goes to the test tree, not to the user's home,
# which lit does not pass on anyway. support-object.test sets its own.
config.environment["CUVIL_CACHE_DIR"] = os.path.join(config.test_exec_root,
                                                     "cache")
config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", "/usr/bin:/bin")])

# The main tree's models carry ONNX Runtime's outputs (ref_<i>.bin); the
# sanitized tree's do not: tests comparing with them say REQUIRES: ort-refs.
if os.path.exists(os.path.join(config.models_dir, "mlp", "ref_0.bin")):
    config.available_features.add("ort-refs")
