#!/usr/bin/env python3
"""cldm_spv_blocks.py — puts the blocks of every function of a SPIR-V module in reverse
post-order, drops OpLoopMerge / OpSelectionMerge, and moves the entry block's OpVariable
instructions to its start.

Why: clang-15 -O1 and above with llvm-spirv-15 can lay out a block before a block that
dominates it, against SPIR-V spec 2.16.1's rule that blocks appear before all blocks they
dominate (spirv-val: "ID ... has not been defined"; pocl accepts such modules), and emit loop
merges that spirv-val rejects ("already a merge block for another header"). Both are layout
problems only: in a Kernel module structured-control-flow merges are optional hints, and any order in which each
block follows its dominators is valid. Reverse post-order of the control-flow graph is such an
order. Blocks unreachable from the entry keep their relative order at the end.
llvm-spirv-15 also keeps an instruction the optimiser hoisted above an alloca before the
variable (spirv-val: "All OpVariable instructions in a function must be the first instructions
in the first block"); Function variables of SPIR-V 1.0 have constant initialisers at most, so
moving them first changes nothing else. A module without either problem comes out unchanged.

usage: cldm_spv_blocks.py IN.spv OUT.spv
"""
import struct
import sys

OP_FUNCTION, OP_FUNCTION_END, OP_LABEL = 54, 56, 248
OP_LOOP_MERGE, OP_SELECTION_MERGE = 246, 247
OP_VARIABLE = 59
OP_BRANCH, OP_BRANCH_CONDITIONAL, OP_SWITCH = 249, 250, 251
TERMINATORS = {249, 250, 251, 252, 253, 254, 255, 4416}


def fail(msg):
    sys.stderr.write("cldm_spv_blocks.py: %s\n" % msg)
    sys.exit(1)


def read_words(path):
    data = open(path, "rb").read()
    if len(data) % 4 or len(data) < 20:
        fail("%s: not a SPIR-V binary" % path)
    for endian in ("<", ">"):
        words = list(struct.unpack("%s%dI" % (endian, len(data) // 4), data))
        if words[0] == 0x07230203:
            return words, endian
    fail("%s: bad magic" % path)


def split(words):
    """Instructions as (offset, list of words) after the 5-word header."""
    insts, i = [], 5
    while i < len(words):
        count = words[i] >> 16
        if count == 0 or i + count > len(words):
            fail("word %d: bad word count %d" % (i, count))
        insts.append(words[i:i + count])
        i += count
    return insts


def successors(term, labels):
    op = term[0] & 0xFFFF
    if op == OP_BRANCH:
        return [term[1]]
    if op == OP_BRANCH_CONDITIONAL:
        return [term[2], term[3]]
    if op == OP_SWITCH:
        rest = term[3:]
        for lit in (1, 2):  # literal width follows the selector type; pick the one that fits
            if len(rest) % (lit + 1) == 0 and all(
                    rest[j] in labels for j in range(lit, len(rest), lit + 1)):
                return [term[2]] + [rest[j] for j in range(lit, len(rest), lit + 1)]
        fail("OpSwitch with unrecognised operands")
    return []


def reorder_function(body):
    """body: instructions from OpFunction to OpFunctionEnd inclusive."""
    head, blocks, cur = [], [], None
    for inst in body[:-1]:
        op = inst[0] & 0xFFFF
        if op == OP_LABEL:
            cur = [inst]
            blocks.append(cur)
        elif cur is None:
            head.append(inst)
        elif op in (OP_LOOP_MERGE, OP_SELECTION_MERGE):
            continue
        else:
            cur.append(inst)
    if not blocks:
        return body  # a declaration
    by_label = {b[0][1]: b for b in blocks}
    for b in blocks:
        if (b[-1][0] & 0xFFFF) not in TERMINATORS:
            fail("block %%%d does not end in a terminator" % b[0][1])
    # iterative DFS post-order from the entry block
    post, seen = [], {blocks[0][0][1]}
    stack = [(blocks[0][0][1], iter(successors(blocks[0][-1], by_label)))]
    while stack:
        label, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            stack.pop()
            post.append(label)
        elif nxt not in seen:
            if nxt not in by_label:
                fail("branch to unknown label %%%d" % nxt)
            seen.add(nxt)
            stack.append((nxt, iter(successors(by_label[nxt][-1], by_label))))
    order = [by_label[l] for l in reversed(post)]
    order += [b for b in blocks if b[0][1] not in seen]
    entry = order[0]
    variables = [i for i in entry[1:] if (i[0] & 0xFFFF) == OP_VARIABLE]
    order[0] = [entry[0]] + variables + [i for i in entry[1:] if (i[0] & 0xFFFF) != OP_VARIABLE]
    out = list(head)
    for b in order:
        out.extend(b)
    out.append(body[-1])
    return out


def main():
    if len(sys.argv) != 3:
        fail("usage: cldm_spv_blocks.py IN.spv OUT.spv")
    words, endian = read_words(sys.argv[1])
    out, func = list(words[:5]), None
    for inst in split(words):
        op = inst[0] & 0xFFFF
        if op == OP_FUNCTION:
            func = [inst]
        elif func is not None:
            func.append(inst)
            if op == OP_FUNCTION_END:
                for i in reorder_function(func):
                    out.extend(i)
                func = None
        else:
            out.extend(inst)
    if func is not None:
        fail("unterminated function")
    with open(sys.argv[2], "wb") as f:
        f.write(struct.pack("%s%dI" % (endian, len(out)), *out))


if __name__ == "__main__":
    main()
