#!/usr/bin/env python3
"""module_map.py — checks that the layer's modules call each other as cldm_layer.h says.

cldm_layer.h's header comment lists the layer's modules in order ("each only modules to its
left", then indented lines): groups separated by '<', the modules of one group by ','. A module (layer_<name>.c)
may call functions of the modules of earlier groups only: not its peers, not later ones. This
script reads that map, then reads from the object files (nm) which global symbols each module
defines and which it uses, and fails on every use of a module that is not to the user's left,
on an object that the map does not name and on a module of the map without an object. The next
dispatch table (cldm_next, cldm_next_entries: data that layer_init.c sets and every module
reads) is the one exception the header states.

    module_map.py --nm NM --header cldm_layer.h --objects "a.o;b.o;..." [--acyclic "x.o;..."]

--acyclic names the objects of another library whose files must not form a call cycle (the PTX
backend, whose internal header lists its files without an order). Exit status 0 if all holds.
"""
import argparse
import os
import re
import subprocess
import sys

SHARED = {"cldm_next", "cldm_next_entries"}  # the next table (cldm_layer.h)


def read_map(header):
    """The module map of `header`: a list of groups, each a list of module names."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"each only modules to its left[^\n]*\n(?: \*[^\n]*\n)*?((?: \*   [^\n]*\n)+)", text)
    if not m:
        sys.exit(f"{header}: no module map (indented lines after 'each only modules to its left')")
    body = " ".join(line.strip().lstrip("*").strip() for line in m.group(1).splitlines())
    groups = [[name.strip() for name in group.split(",")] for group in body.split("<")]
    for group in groups:
        for name in group:
            if not re.fullmatch(r"[a-z_0-9]+", name):
                sys.exit(f"{header}: the module map names {name!r}, not a module")
    return groups


def module_of(path):
    """layer_heap_api.c.o -> heap_api; ptx_check.c.o -> ptx_check."""
    base = os.path.basename(path)
    base = re.sub(r"\.(c|cpp)\.o(bj)?$", "", base)
    return base[len("layer_"):] if base.startswith("layer_") else base


def symbols(nm, path):
    """(defined, undefined) global symbol names of object `path`."""
    out = subprocess.run([nm, "-P", path], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2:
            continue
        name, kind = fields[0], fields[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper() and kind not in "N":  # global definitions (lower case: local)
            defined.add(name)
    return defined, undefined


def uses(nm, objects):
    """{module: {used module: [symbols]}} for the modules of `objects`."""
    table = {module_of(o): symbols(nm, o) for o in objects}
    owner = {}
    for mod, (defined, _) in table.items():
        for name in defined:
            owner[name] = mod
    graph = {}
    for mod, (_, undefined) in table.items():
        edges = graph.setdefault(mod, {})
        for name in sorted(undefined):
            other = owner.get(name)
            if other and other != mod and name not in SHARED:
                edges.setdefault(other, []).append(name)
    return graph


def check_order(groups, graph):
    rank = {name: i for i, group in enumerate(groups) for name in group}
    errors = []
    for mod in sorted(graph):
        if mod not in rank:
            errors.append(f"layer_{mod}.c is not in cldm_layer.h's module map")
    for mod in sorted(rank):
        if mod not in graph:
            errors.append(f"the module map names {mod}, which has no object (layer_{mod}.c)")
    for mod in sorted(graph):
        for other, names in sorted(graph[mod].items()):
            if mod in rank and other in rank and rank[other] >= rank[mod]:
                where = "a peer" if rank[other] == rank[mod] else "to its right"
                errors.append(f"layer_{mod}.c uses layer_{other}.c ({where} in the map): "
                              + ", ".join(names))
    return errors


def find_cycle(graph):
    """A list of modules forming a cycle, or None."""
    state = {}
    stack = []

    def visit(mod):
        state[mod] = 1
        stack.append(mod)
        for other in sorted(graph.get(mod, {})):
            if state.get(other) == 1:
                return stack[stack.index(other):] + [other]
            if not state.get(other):
                found = visit(other)
                if found:
                    return found
        stack.pop()
        state[mod] = 2
        return None

    for mod in sorted(graph):
        if not state.get(mod):
            found = visit(mod)
            if found:
                return found
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nm", default="nm")
    p.add_argument("--header", required=True)
    p.add_argument("--objects", required=True, help="the layer's object files, ';'-separated")
    p.add_argument("--acyclic", default="", help="another library's objects, ';'-separated")
    args = p.parse_args()
    groups = read_map(args.header)
    objects = [o for o in args.objects.split(";") if o]
    graph = uses(args.nm, objects)
    errors = check_order(groups, graph)
    cycle = find_cycle(graph)
    if cycle:
        errors.append("the layer's modules call each other in a cycle: " + " -> ".join(cycle))
    others = [o for o in args.acyclic.split(";") if o]
    if others:
        cycle = find_cycle(uses(args.nm, others))
        if cycle:
            errors.append("files of " + os.path.dirname(others[0]) + " call each other in a cycle: "
                          + " -> ".join(cycle))
    for e in errors:
        print("FAIL:", e)
    edges = sum(len(v) for v in graph.values())
    print(f"{len(graph)} modules, {edges} uses between them, map of {len(groups)} groups: "
          + ("ok" if not errors else f"{len(errors)} problem(s)"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
