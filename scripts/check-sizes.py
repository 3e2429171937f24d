#!/usr/bin/env python3
"""ARCHITECTURE.md's size rules, checked: no file in Sources/ over 500 lines and no type over 600
lines across its files (its declaration and every extension, with the doc comments above them),
generated code aside.

    scripts/check-sizes.py            the check (CI runs it); exits 1 naming what is over
    scripts/check-sizes.py --list     the 15 largest types and files

A type already over its bound when the rule came is listed in OVER with the size it had then: it
may shrink, never grow, and leaves the list when it fits (the check says so).
"""
import collections
import os
import re
import sys

FILE_LIMIT = 500
TYPE_LIMIT = 600

# Types over TYPE_LIMIT when the check came, with their size then; each to be split.
OVER = {
    "CastDeviceEmulator": 1864,  # the emulator's public face: devices, faults, the log
    "EmulatedDevice": 1541,  # one emulated device, a file per namespace
    "CastdClient": 887,  # the Swift client: a method per castd.v1 call
}

DECLARATION = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*"
    r"(?:(?:public|package|internal|fileprivate|private|final|nonisolated|indirect)\s+)*"
    r"(?:actor|class|struct|enum|extension|protocol)\s+([A-Za-z_][\w.]*)"
)


def sources(root):
    for directory, _, names in os.walk(root):
        if os.sep + "Generated" in directory:
            continue
        for name in sorted(names):
            if name.endswith(".swift") and not name.endswith(".pb.swift"):
                yield os.path.join(directory, name)


def measure(root):
    """Lines per file, and lines per top-level type across its files."""
    files, types = {}, collections.Counter()
    for path in sources(root):
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        files[path] = len(lines)
        index = 0
        while index < len(lines):
            match = DECLARATION.match(lines[index])
            if not match:
                index += 1
                continue
            start = index
            while start > 0 and lines[start - 1].startswith("///"):
                start -= 1
            end = index
            if not lines[index].rstrip().endswith("}"):
                # swift-format closes a top-level declaration with a `}` in column 0.
                end = next((k for k in range(index + 1, len(lines)) if lines[k].startswith("}")), index)
            # `extension Castd_V1_X` and `struct X` count under the name they extend.
            types[match.group(1)] += end - start + 1
            index = end + 1
    return files, types


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources")
    files, types = measure(root)
    if "--list" in sys.argv:
        for path, count in sorted(files.items(), key=lambda item: -item[1])[:15]:
            print(f"{count:6} {os.path.relpath(path, os.path.dirname(root))}")
        print()
        for name, count in types.most_common(15):
            print(f"{count:6} {name}")
        return 0
    problems = []
    for path, count in files.items():
        if count > FILE_LIMIT:
            problems.append(f"{os.path.relpath(path, os.path.dirname(root))}: {count} lines (at most {FILE_LIMIT})")
    for name, count in types.items():
        bound = max(TYPE_LIMIT, OVER.get(name, 0))
        if count > bound:
            problems.append(f"type {name}: {count} lines across its files (at most {bound})")
    for name, recorded in OVER.items():
        if types.get(name, 0) <= TYPE_LIMIT:
            problems.append(f"type {name} fits now ({types.get(name, 0)} lines): take it out of OVER in {__file__}")
        elif types[name] < recorded:
            print(f"note: {name} is {types[name]} lines, {recorded} recorded in OVER: lower it", file=sys.stderr)
    for problem in sorted(problems):
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
