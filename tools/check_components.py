#!/usr/bin/env python3
"""Checks libprobe's component declarations (probe_component in lib/<component>/Sources.cmake) against the code.

Reads the manifest CMake writes (build/lib/components.txt: each component's folder, declared uses and object
files) and fails when
  * a component includes another component's internal header ("<other>/X.h") without declaring it,
  * a component's objects use a symbol defined (strongly, by one component only) in another component it does
    not declare,
  * a component declares a use it neither includes nor links against (the declarations stay the picture), or
  * the declared uses form a cycle.
--drop A:B and --add A:B edit the declarations before checking, so the check's own tests can show that an
undeclared use and a cycle fail it.
"""
import argparse
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z_0-9]+)/[^"]+"')


def read_manifest(path):
    components = {}
    current = None
    with open(path) as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition(" ")
            if key == "component":
                current = {"dir": "", "uses": set(), "objects": []}
                components[value] = current
            elif key == "dir":
                current["dir"] = value
            elif key == "uses":
                current["uses"] = set(value.split())
            elif key == "objects":
                current["objects"] = [o for o in value.split("|") if o]
    return components


def included_components(directory, names):
    """component -> [(file, line)] of the internal headers of other components a folder includes."""
    found = {}
    for root, _, files in os.walk(directory):
        for name in sorted(files):
            if not name.endswith((".h", ".cpp", ".inc")):
                continue
            path = os.path.join(root, name)
            with open(path, errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) in names:
                        found.setdefault(m.group(1), []).append(f"{path}:{number}")
    return found


def symbols(objects):
    """(strong definitions, undefined references) of a list of object files, via nm -P."""
    defined, undefined = set(), {}
    for obj in objects:
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            fields = line.split()
            if len(fields) < 2:
                continue
            sym, kind = fields[0], fields[1]
            if kind == "U":
                undefined.setdefault(sym, os.path.basename(obj))
            elif kind in "TDBRG" and len(kind) == 1:
                defined.add(sym)
    return defined, undefined


def demangle(sym):
    out = subprocess.run(["c++filt", sym], capture_output=True, text=True).stdout.strip()
    return out or sym


def find_cycle(graph):
    state = {}

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt] if nxt in path else path + [nxt]
            if nxt not in state:
                cycle = visit(nxt, path + [nxt])
                if cycle:
                    return cycle
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node, [node])
            if cycle:
                return cycle
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("manifest")
    parser.add_argument("--drop", action="append", default=[], help="A:B removes B from A's declared uses")
    parser.add_argument("--add", action="append", default=[], help="A:B adds B to A's declared uses")
    args = parser.parse_args()
    components = read_manifest(args.manifest)
    for edit, op in [(e, "drop") for e in args.drop] + [(e, "add") for e in args.add]:
        a, b = edit.split(":")
        getattr(components[a]["uses"], "discard" if op == "drop" else "add")(b)

    errors = []
    names = set(components)
    for name, c in sorted(components.items()):
        for other in sorted(c["uses"] - names):
            errors.append(f"{name}: declares USES {other}, which is no component")

    cycle = find_cycle({n: c["uses"] & names for n, c in components.items()})
    if cycle:
        errors.append("declared uses form a cycle: " + " -> ".join(cycle))

    owner, tables = {}, {}
    for name, c in components.items():
        tables[name] = symbols(c["objects"])
        for sym in tables[name][0]:
            owner.setdefault(sym, set()).add(name)

    for name, c in sorted(components.items()):
        used = {}
        for other, where in included_components(c["dir"], names - {name}).items():
            used.setdefault(other, f"includes {other}/ ({where[0]})")
        for sym, obj in sorted(tables[name][1].items()):
            definers = owner.get(sym, set())
            if len(definers) == 1:
                (other,) = definers
                if other != name:
                    used.setdefault(other, f"{obj} uses {demangle(sym)}")
        for other, why in sorted(used.items()):
            if other not in c["uses"]:
                errors.append(f"{name}: uses {other} without declaring it (add it to USES in "
                              f"lib/{name}/Sources.cmake): {why}")
        for other in sorted((c["uses"] & names) - set(used)):
            errors.append(f"{name}: declares USES {other} but neither includes nor calls it")

    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"{len(components)} components, their declared uses match the code, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
