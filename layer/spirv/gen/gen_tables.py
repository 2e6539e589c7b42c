#!/usr/bin/env python3
"""gen_tables.py — generates the SPIR-V grammar tables of the engine (layer/spirv) at build time.

Inputs: SPIRV-Headers' spirv.core.grammar.json, the extended-instruction grammars the engine
knows (OpenCL.std, the debug-info sets) and our own spec/extinst.spv-ext-device-malloc.grammar.json
(spec 2.1). Outputs (into the build directory, never committed):
  cldm_spirv_tables.h / .c   opcode, operand-kind, enumerant and ext-inst-set tables
  cldm_spirv_ext_malloc.h    instruction numbers, names and operand roles of SPV_EXT_device_malloc

Usage: gen_tables.py --core CORE.json --malloc MALLOC.json [--extinst NAME=FILE ...] --out DIR
"""
import argparse
import json
import os
import re

# Logical-layout class of an opcode (SPIR-V spec 2.4); must match enum cldm_spirv_layout in
# src/internal.h (the generated header repeats the values).
LAYOUT = ["CAPABILITY", "EXTENSION", "EXTINSTIMPORT", "MEMORYMODEL", "ENTRYPOINT", "EXECMODE",
          "DEBUG_A", "DEBUG_B", "DEBUG_C", "ANNOTATION", "GLOBAL", "ANY", "FUNCTION",
          "FUNCTION_PARAMETER", "FUNCTION_END", "LABEL", "BODY"]
FIXED_LAYOUT = {
    "OpCapability": "CAPABILITY", "OpExtension": "EXTENSION", "OpExtInstImport": "EXTINSTIMPORT",
    "OpMemoryModel": "MEMORYMODEL", "OpEntryPoint": "ENTRYPOINT",
    "OpExecutionMode": "EXECMODE", "OpExecutionModeId": "EXECMODE",
    "OpString": "DEBUG_A", "OpSource": "DEBUG_A", "OpSourceContinued": "DEBUG_A",
    "OpSourceExtension": "DEBUG_A", "OpName": "DEBUG_B", "OpMemberName": "DEBUG_B",
    "OpModuleProcessed": "DEBUG_C",
    "OpVariable": "ANY", "OpUndef": "ANY", "OpLine": "ANY", "OpNoLine": "ANY", "OpExtInst": "ANY",
    "OpNop": "ANY",
    "OpFunction": "FUNCTION", "OpFunctionParameter": "FUNCTION_PARAMETER",
    "OpFunctionEnd": "FUNCTION_END", "OpLabel": "LABEL",
}
TERMINATORS = {"OpBranch", "OpBranchConditional", "OpSwitch", "OpReturn", "OpReturnValue",
               "OpKill", "OpUnreachable", "OpTerminateInvocation", "OpIgnoreIntersectionKHR",
               "OpTerminateRayKHR", "OpEmitMeshTasksEXT"}
CATEGORY = {"Id": 0, "Literal": 1, "Composite": 2, "ValueEnum": 3, "BitEnum": 4}
QUANT = {None: 0, "?": 1, "*": 2}


def layout_of(ins):
    name = ins["opname"]
    if name in FIXED_LAYOUT:
        return FIXED_LAYOUT[name]
    if ins.get("class") == "Annotation":
        return "ANNOTATION"
    if re.match(r"Op(Type|Constant|SpecConstant)", name) or ins.get("class") in (
            "Type-Declaration", "Constant-Creation"):
        return "GLOBAL"
    return "BODY"


def c_ident(s):
    return re.sub(r"[^A-Za-z0-9_]", "_", s)


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def intval(v):
    return int(v, 0) if isinstance(v, str) else int(v)


class Tables:
    def __init__(self):
        self.kinds = []          # dicts: name, cname, category, enumerants, bases
        self.kind_index = {}     # (scope, name) -> index; scope "" is core
        self.operands = []       # (kind index, quantifier)
        self.enumerants = []     # (name, value, first param, nparams)

    def add_operands(self, ops, scope):
        first = len(self.operands)
        for o in ops:
            k = self.kind_index.get((scope, o["kind"]), self.kind_index.get(("", o["kind"])))
            if k is None:
                raise SystemExit("unknown operand kind %s (scope %s)" % (o["kind"], scope))
            self.operands.append((k, QUANT[o.get("quantifier")]))
        return first, len(ops)

    def add_kinds(self, kinds, scope):
        # Register names first (enumerant parameters may name kinds defined later).
        for k in kinds:
            idx = len(self.kinds)
            cname = c_ident((scope + "_" if scope else "") + k["kind"])
            self.kinds.append({"name": k["kind"], "cname": cname, "category": k["category"],
                               "src": k, "scope": scope})
            self.kind_index[(scope, k["kind"])] = idx
        for kd in self.kinds:
            if kd["scope"] != scope:
                continue
            k = kd["src"]
            kd["bases"] = [self.kind_index.get((scope, b), self.kind_index.get(("", b)))
                           for b in k.get("bases", [])]
            seen = {}
            for e in k.get("enumerants", []):
                v = intval(e["value"])
                if v not in seen:
                    seen[v] = e
            first = len(self.enumerants)
            for v in sorted(seen):
                e = seen[v]
                pf, pn = self.add_operands(e.get("parameters", []), scope)
                self.enumerants.append((e["enumerant"], v, pf, pn))
            kd["first"] = first
            kd["count"] = len(self.enumerants) - first


def set_name_from_file(path):
    # SPIRV-Tools' rule: extinst.spv-amd-gcn-shader.grammar.json -> SPV_AMD_gcn_shader
    base = os.path.basename(path)
    stem = base[len("extinst."):-len(".grammar.json")]
    parts = stem.split("-")
    return "_".join([p.upper() for p in parts[:2]] + parts[2:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--core", required=True)
    ap.add_argument("--malloc", required=True)
    ap.add_argument("--extinst", action="append", default=[], help="SETNAME=FILE")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    core = json.load(open(a.core))
    t = Tables()
    t.add_kinds(core["operand_kinds"], "")

    ops = {}
    for ins in core["instructions"]:
        if ins["opcode"] not in ops:
            ops[ins["opcode"]] = ins
    opcodes = []
    for code in sorted(ops):
        ins = ops[code]
        operands = ins.get("operands", [])
        kinds = [o["kind"] for o in operands]
        has_type = len(kinds) > 0 and kinds[0] == "IdResultType"
        has_result = "IdResult" in kinds[:2]
        rest = operands[(1 if has_type else 0) + (1 if has_result else 0):]
        first, n = t.add_operands(rest, "")
        flags = (1 if has_type else 0) | (2 if has_result else 0) | \
                (4 if ins["opname"] in TERMINATORS else 0)
        opcodes.append((ins["opname"], code, layout_of(ins), flags, first, n))

    malloc_name = set_name_from_file(a.malloc)
    sets = []   # (name, all_ids, [(opname, number, first, n)])
    for spec in a.extinst:
        name, path = spec.split("=", 1)
        g = json.load(open(path))
        scope = c_ident(name)
        t.add_kinds(g.get("operand_kinds", []), scope)
        insts = []
        for ins in sorted(g["instructions"], key=lambda i: i["opcode"]):
            first, n = t.add_operands(ins.get("operands", []), scope)
            insts.append((ins["opname"], ins["opcode"], first, n))
        sets.append((name, 0, insts))
    mg = json.load(open(a.malloc))
    minsts = []
    for ins in sorted(mg["instructions"], key=lambda i: i["opcode"]):
        first, n = t.add_operands(ins.get("operands", []), "")
        minsts.append((ins["opname"], ins["opcode"], first, n))
    sets.append((malloc_name, 0, minsts))

    max_opcode = max(ops)
    os.makedirs(a.out, exist_ok=True)
    h = []
    h.append("/* cldm_spirv_tables.h — GENERATED by layer/spirv/gen/gen_tables.py from SPIRV-Headers'")
    h.append(" * grammar (%d.%d rev %s) and spec/extinst.*.grammar.json. Do not edit. */" %
             (core["major_version"], core["minor_version"], core["revision"]))
    h.append("#ifndef CLDM_SPIRV_TABLES_H\n#define CLDM_SPIRV_TABLES_H\n#include <stdint.h>\n")
    h.append("enum { CLDM_SPIRV_CAT_ID, CLDM_SPIRV_CAT_LITERAL, CLDM_SPIRV_CAT_COMPOSITE,")
    h.append("       CLDM_SPIRV_CAT_VALUE_ENUM, CLDM_SPIRV_CAT_BIT_ENUM };")
    h.append("enum { CLDM_SPIRV_QUANT_ONE, CLDM_SPIRV_QUANT_OPTIONAL, CLDM_SPIRV_QUANT_MANY };")
    h.append("enum { CLDM_SPIRV_OPF_TYPE = 1, CLDM_SPIRV_OPF_RESULT = 2, CLDM_SPIRV_OPF_TERMINATOR = 4 };")
    h.append("enum cldm_spirv_layout {")
    for i, l in enumerate(LAYOUT):
        h.append("  CLDM_SPIRV_LAYOUT_%s = %d," % (l, i))
    h.append("  CLDM_SPIRV_LAYOUT_COUNT = %d\n};" % len(LAYOUT))
    h.append("enum cldm_spirv_kind_id {")
    for i, k in enumerate(t.kinds):
        h.append("  CLDM_SPIRV_KIND_%s = %d," % (k["cname"], i))
    h.append("  CLDM_SPIRV_KIND_COUNT = %d\n};" % len(t.kinds))
    h.append("enum cldm_spirv_extset_id {\n  CLDM_SPIRV_EXTSET_UNKNOWN = 0,")
    for i, s in enumerate(sets):
        h.append("  CLDM_SPIRV_EXTSET_%s = %d," % (c_ident(s[0]).upper(), i + 1))
    h.append("  CLDM_SPIRV_EXTSET_NONSEMANTIC = %d, /* any NonSemantic.* set: all operands are ids */" %
             (len(sets) + 1))
    h.append("  CLDM_SPIRV_EXTSET_COUNT = %d\n};" % (len(sets) + 2))
    h.append("#define CLDM_SPIRV_EXTSET_DEVICE_MALLOC CLDM_SPIRV_EXTSET_%s" % c_ident(malloc_name).upper())
    h.append("#define CLDM_SPIRV_MAX_OPCODE %d" % max_opcode)
    h.append("""
typedef struct cldm_spirv_operand_desc { uint16_t kind; uint8_t quant; } cldm_spirv_operand_desc;
typedef struct cldm_spirv_enumerant_desc {
  const char *name; uint32_t value; uint16_t params; uint8_t nparams;
} cldm_spirv_enumerant_desc;
typedef struct cldm_spirv_kind_desc {
  const char *name; uint8_t category; uint16_t first; uint16_t count; int16_t base[2];
} cldm_spirv_kind_desc;
typedef struct cldm_spirv_opcode_desc {
  const char *name; uint16_t opcode; uint8_t layout; uint8_t flags; uint16_t operands;
  uint8_t noperands;
} cldm_spirv_opcode_desc;
typedef struct cldm_spirv_extinst_desc {
  const char *name; uint32_t number; uint16_t operands; uint8_t noperands;
} cldm_spirv_extinst_desc;
typedef struct cldm_spirv_extset_desc {
  const char *name; const cldm_spirv_extinst_desc *inst; uint16_t ninst;
} cldm_spirv_extset_desc;

extern const cldm_spirv_operand_desc cldm_spirv_operand_descs[];
extern const cldm_spirv_enumerant_desc cldm_spirv_enumerants[];
extern const cldm_spirv_kind_desc cldm_spirv_kinds[CLDM_SPIRV_KIND_COUNT];
extern const cldm_spirv_opcode_desc cldm_spirv_opcodes[];
extern const int16_t cldm_spirv_opcode_index[CLDM_SPIRV_MAX_OPCODE + 1];
extern const cldm_spirv_extset_desc cldm_spirv_extsets[CLDM_SPIRV_EXTSET_COUNT];
#endif""")
    c = []
    c.append("/* cldm_spirv_tables.c — GENERATED by layer/spirv/gen/gen_tables.py. Do not edit. */")
    c.append('#include "cldm_spirv_tables.h"\n#include <stddef.h>\n')
    c.append("const cldm_spirv_operand_desc cldm_spirv_operand_descs[] = {")
    for k, q in t.operands or [(0, 0)]:
        c.append("  {%d, %d}," % (k, q))
    c.append("};\nconst cldm_spirv_enumerant_desc cldm_spirv_enumerants[] = {")
    for n, v, pf, pn in t.enumerants:
        c.append("  {%s, %du, %d, %d}," % (c_str(n), v, pf, pn))
    c.append("};\nconst cldm_spirv_kind_desc cldm_spirv_kinds[CLDM_SPIRV_KIND_COUNT] = {")
    for k in t.kinds:
        b = (k.get("bases") or []) + [-1, -1]
        c.append("  {%s, %d, %d, %d, {%d, %d}}," % (c_str(k["name"]), CATEGORY[k["category"]],
                                                   k.get("first", 0), k.get("count", 0), b[0], b[1]))
    c.append("};\nconst cldm_spirv_opcode_desc cldm_spirv_opcodes[] = {")
    index = [-1] * (max_opcode + 1)
    for i, (n, code, lay, flags, first, cnt) in enumerate(opcodes):
        index[code] = i
        c.append("  {%s, %d, CLDM_SPIRV_LAYOUT_%s, %d, %d, %d}," % (c_str(n), code, lay, flags, first, cnt))
    c.append("};\nconst int16_t cldm_spirv_opcode_index[CLDM_SPIRV_MAX_OPCODE + 1] = {")
    for i in range(0, len(index), 16):
        c.append("  " + ", ".join(str(x) for x in index[i:i + 16]) + ",")
    c.append("};")
    for s in sets:
        c.append("static const cldm_spirv_extinst_desc extset_%s[] = {" % c_ident(s[0]))
        for n, num, first, cnt in s[2]:
            c.append("  {%s, %d, %d, %d}," % (c_str(n), num, first, cnt))
        c.append("};")
    c.append("const cldm_spirv_extset_desc cldm_spirv_extsets[CLDM_SPIRV_EXTSET_COUNT] = {")
    c.append("  {NULL, NULL, 0},")
    for s in sets:
        c.append("  {%s, extset_%s, %d}," % (c_str(s[0]), c_ident(s[0]), len(s[2])))
    c.append('  {"NonSemantic.", NULL, 0},\n};')

    m = []
    m.append("/* cldm_spirv_ext_malloc.h — GENERATED by layer/spirv/gen/gen_tables.py from")
    m.append(" * spec/%s (spec 2.1). Do not edit. */" % os.path.basename(a.malloc))
    m.append("#ifndef CLDM_SPIRV_EXT_MALLOC_H\n#define CLDM_SPIRV_EXT_MALLOC_H\n#include <stdint.h>\n")
    m.append("#define CLDM_SPIRV_EXT_MALLOC_SET_NAME %s" % c_str(malloc_name))
    m.append("/* Operand roles: integers read as unsigned sizes, or a heap pointer. */")
    m.append("enum { CLDM_SPIRV_EXT_ROLE_INT = 1, CLDM_SPIRV_EXT_ROLE_PTR = 2 };")
    m.append("enum cldm_spirv_ext_op {")
    nmax = 0
    for n, num, first, cnt in minsts:
        m.append("  CLDM_SPIRV_EXT_%s = %d," % (c_ident(n).upper(), num))
        nmax = max(nmax, num)
    m.append("  CLDM_SPIRV_EXT_MAX = %d\n};" % nmax)
    m.append("#define CLDM_SPIRV_EXT_MAX_OPERANDS %d" % max(len(i.get("operands", [])) for i in mg["instructions"]))
    names = ["NULL"] * (nmax + 1)
    nops = ["0"] * (nmax + 1)
    roles = ["{0}"] * (nmax + 1)
    opnames = ["{0}"] * (nmax + 1)
    voids = ["0"] * (nmax + 1)
    for ins in mg["instructions"]:
        num = ins["opcode"]
        names[num] = c_str(ins["opname"])
        nops[num] = str(len(ins.get("operands", [])))
        rl = []
        on = []
        for o in ins.get("operands", []):
            nm = o.get("name", "").strip("'")
            on.append(c_str(nm))
            rl.append("CLDM_SPIRV_EXT_ROLE_PTR" if nm == "Ptr" else "CLDM_SPIRV_EXT_ROLE_INT")
        roles[num] = "{" + ", ".join(rl or ["0"]) + "}"
        opnames[num] = "{" + ", ".join(on or ["0"]) + "}"
        # spec 2.1: free's result is OpTypeVoid, every other instruction returns a pointer.
        voids[num] = "1" if ins["opname"] == "free" else "0"
    m.append("/* Indexed by instruction number (1..CLDM_SPIRV_EXT_MAX); index 0 unused. */")
    decls = [("const char *const", "cldm_spirv_ext_names[]", names),
             ("const uint8_t", "cldm_spirv_ext_noperands[]", nops),
             ("const uint8_t", "cldm_spirv_ext_roles[][CLDM_SPIRV_EXT_MAX_OPERANDS]", roles),
             ("const char *const", "cldm_spirv_ext_operand_names[][CLDM_SPIRV_EXT_MAX_OPERANDS]", opnames),
             ("const uint8_t", "cldm_spirv_ext_returns_void[]", voids)]
    for ty, nm, vals in decls:
        m.append("extern %s %s;" % (ty, nm))
    c.append('#include "cldm_spirv_ext_malloc.h"')
    for ty, nm, vals in decls:
        c.append("%s %s = {%s};" % (ty, nm, ", ".join(vals)))
    m.append("#endif")

    def write(name, lines):
        path = os.path.join(a.out, name)
        text = "\n".join(lines) + "\n"
        if os.path.exists(path) and open(path).read() == text:
            return
        with open(path, "w") as f:
            f.write(text)
    write("cldm_spirv_tables.h", h)
    write("cldm_spirv_tables.c", c)
    write("cldm_spirv_ext_malloc.h", m)


if __name__ == "__main__":
    main()
