#!/usr/bin/env python3
"""cldm_ll_native_ints.py — declares 8/16/32/64-bit integers native in an LLVM IR text module
(appends "-n8:16:32:64" to its target datalayout).

Why: clang's spir/spir64 data layouts name no native integer widths, so LLVM's optimiser may
narrow arithmetic to widths such as i3 or i5 ("x & 31" used as a shift amount), which
llvm-spirv-15 cannot express ("InvalidBitWidth"). With native widths declared, InstCombine
keeps standard widths. The layout string is otherwise unchanged.

usage: cldm_ll_native_ints.py IN.ll OUT.ll
"""
import re
import sys

text = open(sys.argv[1]).read()
new, n = re.subn(r'^(target datalayout = "[^"]*?)(-n[0-9:]+)?"', r'\1-n8:16:32:64"', text,
                 count=1, flags=re.M)
if n != 1:
    sys.exit("cldm_ll_native_ints.py: %s: no target datalayout" % sys.argv[1])
open(sys.argv[2], "w").write(new)
