#!/usr/bin/env python3
"""Generates the compiler's typed kernel ABI from the runtime's C prototypes.

The kernels' parameters are declared once, in runtime-baremetal/include/
cuvil/kernels.h (and the cuvil/kernels/*.h it includes). This script runs the
C preprocessor on that header (so that prototypes written through macros
count too), reads every `cuvil_k_*` prototype and writes:

  KernelAbi.h    one aggregate per kernel in namespace cuvil::kabi, with a
                 named field per parameter in the prototype's order
                 (pointers: PtrArg; int64_t: int64_t; float: float), so
                 designated initializers name every argument;
                 `KernelCall call() const` (the positional call) and
                 `static X from(const KernelCall &)` (the decoder). Kernels
                 with identical parameter lists (names and kinds) also share
                 a group aggregate whose first field is the kernel's name,
                 for lowerings that compute it;
  KernelAbi.cpp  their definitions and the table of every signature
                 (kernelSignatures()).

Usage: gen_kernel_abi.py CC INCLUDE_DIR OUT_DIR
"""

import re
import subprocess
import sys
from collections import OrderedDict

KINDS = {"int64_t": "i", "float": "f"}
FIELD_TYPES = {"p": "PtrArg", "i": "int64_t", "f": "float"}
CXX_KEYWORDS = {"and", "auto", "bool", "case", "char", "class", "const",
                "default", "delete", "do", "double", "else", "enum", "float",
                "for", "if", "int", "long", "new", "not", "or", "private",
                "public", "return", "short", "signed", "sizeof", "static",
                "struct", "switch", "template", "this", "union", "unsigned",
                "using", "void", "xor"}


def fail(msg):
    sys.exit("gen_kernel_abi.py: " + msg)


def read_prototypes(cc, include_dir):
    header = include_dir + "/cuvil/kernels.h"
    try:
        text = subprocess.run([cc, "-E", "-P", "-x", "c", "-I", include_dir,
                               header], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fail(f"cannot preprocess {header}: {e}")
    text = " ".join(text.split())
    kernels = OrderedDict()
    for m in re.finditer(r"([\w ]+?)\s*\b(cuvil_k_\w+)\s*\(([^)]*)\)\s*;",
                         text):
        ret, name, plist = m.group(1).split(), m.group(2), m.group(3)
        if ret[-1] != "void":
            fail(f"{name}: kernels return void, not '{' '.join(ret)}'")
        params = []
        for p in plist.split(","):
            pm = re.fullmatch(r"\s*(.*?)\s*(\w+)\s*", p)
            if not pm:
                fail(f"{name}: cannot read parameter '{p.strip()}'")
            ctype, pname = pm.group(1), pm.group(2)
            if "*" in ctype:
                kind = "p"
            elif ctype in KINDS:
                kind = KINDS[ctype]
            else:
                fail(f"{name}: parameter '{pname}' has type '{ctype}'; "
                     "the ABI knows pointers, int64_t and float")
            if pname in CXX_KEYWORDS:
                pname += "_"
            params.append((pname, kind))
        if name in kernels and kernels[name] != params:
            fail(f"{name} is declared twice with different parameters")
        kernels[name] = params
    if not kernels:
        fail(f"no cuvil_k_* prototype found in {header}")
    return kernels


def camel(words):
    return "".join(w[:1].upper() + w[1:] for w in words if w)


def struct_name(kernel):
    return camel(kernel[len("cuvil_k_"):].split("_"))


def group_name(members, params):
    """The common leading words of the members' names, else the parameter
    names: StridedCopyGroup, XYNGroup."""
    words = [m[len("cuvil_k_"):].split("_") for m in members]
    common = []
    for column in zip(*words):
        if len(set(column)) != 1:
            break
        common.append(column[0])
    if not common:
        common = [w for p, _ in params for w in p.split("_")]
    return camel(common) + "Group"


def fields(params):
    out = []
    for pname, kind in params:
        init = "{}" if kind == "p" else " = 0"
        out.append(f"  {FIELD_TYPES[kind]} {pname}{init};")
    return out


def call_body(params, name_expr):
    args = []
    for pname, kind in params:
        args.append({"p": f"{pname}", "i": f"KernelArg::i({pname})",
                     "f": f"KernelArg::f({pname})"}[kind])
    return [f"  return {{{name_expr}, {{{', '.join(args)}}}}};"]


def decode_body(params, var):
    out = []
    for i, (pname, kind) in enumerate(params):
        reader = {"p": "ptr", "i": "i", "f": "f"}[kind]
        out.append(f"  {var}.{pname} = R.{reader}({i});")
    return out


def signature(params):
    return "".join(kind for _, kind in params)


def generate(kernels):
    groups = OrderedDict()
    for name, params in kernels.items():
        groups.setdefault(tuple(params), []).append(name)
    group_of = {}
    group_names = {}
    for params, members in groups.items():
        if len(members) > 1:
            gname = group_name(members, params)
            if gname in group_names.values():
                gname = camel([w for p, _ in params
                               for w in p.split("_")]) + "Group"
            group_names[params] = gname
            for m in members:
                group_of[m] = gname

    h = ["// Generated by cmake/gen_kernel_abi.py from cuvil/kernels.h: do not",
         "// edit. One typed builder per kernel (see lowering/KernelAbiSupport.h).",
         "#ifndef CUVIL_LOWERING_KERNELABI_H",
         "#define CUVIL_LOWERING_KERNELABI_H",
         "",
         '#include "lowering/KernelAbiSupport.h"',
         "",
         "namespace cuvil::kabi {",
         ""]
    c = ["// Generated by cmake/gen_kernel_abi.py from cuvil/kernels.h: do not",
         "// edit.",
         '#include "lowering/KernelAbi.h"',
         "",
         "namespace cuvil::kabi {",
         ""]

    for params, gname in group_names.items():
        members = groups[params]
        h += [f"/// Kernels of parameters ({', '.join(p for p, _ in params)}):",
              f"/// {', '.join(members[:4])}{', ...' if len(members) > 4 else ''}"
              f" ({len(members)} kernels).",
              f"struct {gname} {{",
              "  /// Which kernel of the group (checked by call()).",
              "  std::string Kernel;"] + fields(params) + [
              "  static bool contains(std::string_view Kernel);",
              "  KernelCall call() const;",
              f"  static {gname} from(const KernelCall &C);",
              "};",
              ""]
        c += [f"static const char *const {gname}Members[] = {{"]
        c += [f'    "{m}",' for m in sorted(members)]
        c += ["};",
              "",
              f"bool {gname}::contains(std::string_view K) {{",
              f"  return isMember({gname}Members, K);",
              "}",
              "",
              f"KernelCall {gname}::call() const {{",
              "  if (!contains(Kernel))",
              f'    abiFatal(Kernel, "is not a kernel of {gname}");']
        c += call_body(params, "Kernel") + ["}", ""]
        c += [f"{gname} {gname}::from(const KernelCall &C) {{",
              "  if (!contains(C.Kernel))",
              f'    abiFatal(C.Kernel, "is not a kernel of {gname}");',
              f"  CallReader R(C, {len(params)});",
              f"  {gname} K;",
              "  K.Kernel = C.Kernel;"]
        c += decode_body(params, "K") + ["  return K;", "}", ""]

    for name, params in kernels.items():
        sname = struct_name(name)
        gname = group_of.get(name)
        note = f" (also in {gname})" if gname else ""
        h += [f"/// {name}({', '.join(p for p, _ in params)}){note}.",
              f"struct {sname} {{",
              f'  static constexpr const char *Name = "{name}";'] + \
            fields(params) + [
              "  KernelCall call() const;",
              f"  static {sname} from(const KernelCall &C);",
              "};",
              ""]
        c += [f"KernelCall {sname}::call() const {{"]
        c += call_body(params, "Name") + ["}", ""]
        c += [f"{sname} {sname}::from(const KernelCall &C) {{",
              "  CallReader R(C, Name);",
              f"  R.arity({len(params)});",
              f"  {sname} K;"]
        c += decode_body(params, "K") + ["  return K;", "}", ""]

    c += ["static const KernelSignature Signatures[] = {"]
    for name in sorted(kernels):
        c.append(f'    {{"{name}", "{signature(kernels[name])}"}},')
    c += ["};",
          "",
          "llvm::ArrayRef<KernelSignature> kernelSignatures() {",
          "  return Signatures;",
          "}",
          "",
          "} // namespace cuvil::kabi"]
    h += ["} // namespace cuvil::kabi", "", "#endif"]
    return "\n".join(h) + "\n", "\n".join(c) + "\n"


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) != 4:
        fail("usage: gen_kernel_abi.py CC INCLUDE_DIR OUT_DIR")
    cc, include_dir, out_dir = sys.argv[1:]
    header, source = generate(read_prototypes(cc, include_dir))
    write_if_changed(out_dir + "/KernelAbi.h", header)
    write_if_changed(out_dir + "/KernelAbi.cpp", source)


if __name__ == "__main__":
    main()
