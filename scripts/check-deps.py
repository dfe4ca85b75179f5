#!/usr/bin/env python3
"""The dependency rules of the tree (README, "Layout"), for scripts/check-structure.sh.

A room is one .c file with its own header (the .h of the same name beside it).
Room A depends on room B when A's code names something B defines: a function
or global that B's .c defines, or a macro, type, enum constant or inline
function that B's own header defines. Names defined in more than one place,
and headers without a .c of their own, tie no rooms. The rule: no cycle.

check-deps.py ROOT DIR...   print each cycle (the rooms, the names that tie
                            them) and exit 1; exit 0 when there is none.
"""
import os
import re
import sys

TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*', re.S)
IDENT = re.compile(r'[A-Za-z_]\w*$')
FUNC_DEF = re.compile(r'^(?!static\b|extern\b|typedef\b)[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\([^;]*$')
GLOBAL_DEF = re.compile(
    r'^(?!static\b|extern\b|typedef\b|return\b)(?:const\s+)?(?:struct\s+\w+|enum\s+\w+|\w+)'
    r'(?:\s+const)?[\s\*]+(\w+)\s*(?:\[[^\]]*\])*\s*(?:=|;)')
MACRO = re.compile(r'^\s*#\s*define\s+(\w+)', re.M)
TAG = re.compile(r'\b(?:struct|union|enum)\s+(\w+)\s*\{')
TYPEDEF = re.compile(r'\btypedef\b[^;{]*?(?:\(\s*\*\s*(\w+)\s*\)|\b(\w+)\s*;)')
INLINE = re.compile(r'^static\s+inline\b[^;{]*?\b(\w+)\s*\([^;]*$', re.M)
ENUM_BODY = re.compile(r'\benum\s*\w*\s*\{(.*?)\}', re.S)


def strip(text):
    """The code without comments and string literals (identifiers kept in place)."""
    return ' '.join(m.group(0) for m in TOKEN.finditer(text) if IDENT.match(m.group(0)))


def code_only(text):
    """Comments and strings blanked, lines kept (for line-based definitions)."""
    def keep(m):
        s = m.group(0)
        if IDENT.match(s):
            return s
        return re.sub(r'[^\n]', ' ', s)
    return TOKEN.sub(keep, text)


def c_defs(text):
    """Non-static functions and globals defined at file scope of a .c file."""
    names = set()
    lines = code_only(text).split('\n')
    depth = 0
    for i, line in enumerate(lines):
        if depth == 0 and line and not line[0].isspace() and not line.startswith('#'):
            m = FUNC_DEF.match(line)
            if m:
                # a definition: its body opens with "{" alone in column 0 below
                for nxt in lines[i + 1:i + 12]:
                    if nxt.startswith('{'):
                        names.add(m.group(1))
                        break
                    if nxt.rstrip().endswith(';'):
                        break
            else:
                g = GLOBAL_DEF.match(line)
                if g:
                    names.add(g.group(1))
        depth += line.count('{') - line.count('}')
        if depth < 0:
            depth = 0
    return names


def h_defs(text):
    """What a header itself defines: macros, tags, typedefs, enum constants, inlines."""
    code = code_only(text)
    names = set(MACRO.findall(code)) | set(TAG.findall(code)) | set(INLINE.findall(code))
    for a, b in TYPEDEF.findall(code):
        names.add(a or b)
    for body in ENUM_BODY.findall(code):
        for item in body.split(','):
            m = re.match(r'\s*([A-Za-z_]\w*)', item)
            if m:
                names.add(m.group(1))
    names.discard('')
    return names


def rooms(root, dirs):
    files = []
    for d in dirs:
        for base, _, names in os.walk(os.path.join(root, d)):
            if '/vmlinux' in base:
                continue
            files += [os.path.join(base, n) for n in names if n.endswith(('.c', '.h'))]
    rel = lambda p: os.path.relpath(p, root)
    cfiles = sorted(rel(f) for f in files if f.endswith('.c'))
    hfiles = sorted(rel(f) for f in files if f.endswith('.h'))
    owner = {}  # name -> room, None when defined in more than one
    def own(name, room):
        owner[name] = None if name in owner and owner[name] != room else room
    for c in cfiles:
        room = c[:-2]
        for n in c_defs(open(os.path.join(root, c), errors='replace').read()):
            own(n, room)
    for h in hfiles:
        # a header without a .c of its own is no room: its names tie nothing
        room = h[:-2] if h[:-2] + '.c' in cfiles else '#' + h
        for n in h_defs(open(os.path.join(root, h), errors='replace').read()):
            own(n, room)
    edges = {}
    for c in cfiles:
        room = c[:-2]
        text = open(os.path.join(root, c), errors='replace').read()
        h = os.path.join(root, room + '.h')
        if os.path.exists(h):
            text += '\n' + open(h, errors='replace').read()
        used = set(strip(text).split())
        for n in used:
            other = owner.get(n)
            if other and other != room and not other.startswith('#') and n != 'main':
                edges.setdefault(room, {}).setdefault(other, set()).add(n)
    return [c[:-2] for c in cfiles], edges


def cycles(nodes, edges):
    """Tarjan's strongly connected components of more than one room."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root, dirs = sys.argv[1], sys.argv[2:]
    nodes, edges = rooms(root, dirs)
    found = cycles(nodes, edges)
    for comp in found:
        print('cycle of %d rooms: %s' % (len(comp), ' '.join(comp)))
        for a in comp:
            for b in comp:
                names = edges.get(a, {}).get(b)
                if names:
                    print('  %s -> %s: %s' % (a, b, ', '.join(sorted(names)[:6])))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
