#!/usr/bin/env python3
"""loops.py BUILD_DIR: which source files call each other in a loop, and
which call a layer above their own.

The linker already knows who calls whom: every object file lists the
symbols it defines and the ones it needs (nm). A file A "calls" file B
when A needs a symbol B defines (a function, or data such as a table).
The files that reach each other through such edges form a loop; this
prints each loop (a strongly connected set of two or more files) with
the symbols on its edges, and exits 1 if there is one.

The folders are layers, low to high (LAYERS below, as CMakeLists.txt
builds them): a file may call its own folder and the ones below, never
one above. The compiler already refuses an include that runs back up
(each layer sees only the headers below it); a call needs no include
(a declaration written by hand), so this checks the calls too, and
exits 1 on either.

Only the objects of the module's library (its layers and the allocator
table) are read: tests, fuzzers and programs sit on top and may call
anything below them. Static functions never cross files, so they cannot
make a loop and are not seen.
"""
import collections
import os
import subprocess
import sys


LAYERS = ("lib", "prof", "core", "answer", "proto", "daemon", "http",
          "module")


def layer(src):
    """The rank of the folder @p src is in; a generated file (the page,
    in the build directory) is the layer of the one its object is in."""
    top = src.split("/", 1)[0]
    if top not in LAYERS:
        top = GENERATED.get(src, "")
    return LAYERS.index(top) if top in LAYERS else len(LAYERS)


GENERATED = {}


def source_dir(build):
    """The source tree @p build was configured from, or None."""
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


def objects(build):
    """The object files of the library's own sources, by source path:
    an object whose source has gone (moved to another layer since the
    last build) is left over, not part of the library."""
    out = {}
    tree = source_dir(build)
    dirs = ["jm4lw_objs_%s.dir" % layer for layer in LAYERS]
    for d in dirs + ["jm4lw_ops_linked.dir"]:
        top = os.path.join(build, "CMakeFiles", d)
        for root, _, files in os.walk(top):
            for f in files:
                if not f.endswith(".c.o"):
                    continue
                src = os.path.relpath(os.path.join(root, f), top)[:-2]
                if src.startswith(".."):
                    continue
                if ("/" in src and tree is not None and
                        not os.path.exists(os.path.join(tree, src))):
                    continue
                if "/" not in src and d.startswith("jm4lw_objs_"):
                    GENERATED[src] = d[len("jm4lw_objs_"):-len(".dir")]
                out[src] = os.path.join(root, f)
    return out


def symbols(obj):
    """(defined, needed) global symbols of one object file."""
    res = subprocess.run(["nm", "-P", obj], capture_output=True, text=True,
                         check=True)
    defined, needed = set(), set()
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            needed.add(name)
        elif kind in "TDBRVWGS":
            defined.add(name)
    return defined, needed


def sccs(graph):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: loops.py BUILD_DIR")
    objs = objects(sys.argv[1])
    if not objs:
        sys.exit("loops.py: no objects of the library's layers under " +
                 sys.argv[1])
    defs, needs = {}, {}
    for src, obj in objs.items():
        d, n = symbols(obj)
        needs[src] = n
        for s in d:
            defs[s] = src
    graph = collections.defaultdict(set)
    why = collections.defaultdict(set)
    for src in objs:
        graph[src]
        for s in needs[src]:
            to = defs.get(s)
            if to is not None and to != src:
                graph[src].add(to)
                why[(src, to)].add(s)
    loops = [c for c in sccs(graph) if len(c) > 1]
    for c in loops:
        print("loop: " + " ".join(c))
        for a in c:
            for b in sorted(graph[a]):
                if b in c:
                    print("  %s -> %s: %s" % (a, b, " ".join(sorted(why[(a, b)]))))
    up = sorted((a, b) for a in graph for b in graph[a]
                if layer(b) > layer(a))
    for a, b in up:
        print("up: %s -> %s: %s" % (a, b, " ".join(sorted(why[(a, b)]))))
    print("%d files, %d edges, %d loops, %d calls up a layer" %
          (len(objs), sum(len(v) for v in graph.values()), len(loops),
           len(up)))
    sys.exit(1 if loops or up else 0)


if __name__ == "__main__":
    main()
