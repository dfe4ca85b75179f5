#!/usr/bin/env python3
"""A command's --help text and its man page, from one source.

A source is NAME.help (NAME: the man page, e.g. sbtrace-trace), kept in the room
of the command it documents. Lines that start with '@' are directives; every
other line belongs to the section above it.

  @name NAME - SUMMARY     the page's NAME line (section 1)
  @help ID COMMAND...      a help text: sbt_help_ID(FILE *) in the generated
                           header; COMMAND prints it (check-help.sh compares them)
  @options ID FILE TABLE   help ID names every long option of the getopt table
                           `struct option TABLE[]` in FILE (check-help.sh)
  @section TITLE[: SUB] [ID]  a section of the man page (SUB: a sub-section of it).
                           With ID its text is part of help ID too: --help prints
                           the sections of ID in file order, exactly as written
                           (trailing blank lines cut)
  @include FILE            FILE's lines here (FILE relative to this source)
  @# ...                   a comment

Help text (a section with an ID) is plain text. @CONST@ is the value of CONST, a
#define or enum constant of a header under bpf/, loader/ or userspace/ whose value
is a literal number or string: the header prints it with printf from the
constant itself (so --help is true by construction), the man page and `text`
with the value read here (check-help.sh proves both the same). @@ is one '@'.
In the man page, SYNOPSIS takes "Usage:" lines (indented lines continue them);
elsewhere an indented line "TAG  TEXT" (two or more blanks; TAG an option, an
exit code, a word) or an indented option alone is a tagged paragraph, deeper
lines continue it, "  - " is a bullet, and other lines are paragraphs.

Man-only text (a section without an ID) is a small Markdown: paragraphs,
"### TITLE" sub-sections, "- " bullets ("  - " nested once, continued by lines
indented as deep), tables ("| a | b |", the first row the head, "|---" skipped),
``` blocks, `code` and **bold** (bold), *italic*, [text](link) (the text).

gen-help.py header SRC OUT [DEPS]   the C header: static inline sbt_help_ID()
gen-help.py man SRC OUT [DEPS]      the man page (VERSION and DATE from the environment)
gen-help.py text SRC ID             help ID as --help must print it
gen-help.py list SRC                "help ID COMMAND..." and "options ID FILE TABLE" lines
gen-help.py longopts FILE TABLE     the long options of a getopt table, one a line
DEPS: a make rule (OUT: the files it was made from) written there.
"""
import os
import re
import sys

ROOT = '.'
CONST_DIRS = ('bpf', 'loader', 'userspace')
ORDER = ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS']
LATE = ['EXIT STATUS', 'ENVIRONMENT', 'FILES', 'NOTES', 'EXAMPLES', 'SEE ALSO']


class SourceError(Exception):
    pass


# ---- the source ----------------------------------------------------------------

class Page:
    def __init__(self, path):
        self.path = path
        self.name = self.summary = None
        self.helps = {}       # id -> command
        self.options = []     # (id, file, table)
        self.sections = []    # [title, help id or None, [(line, where)]]
        self.files = [path]   # what the page was made from
        self.read(path)
        if not self.name:
            raise SourceError('%s: no @name line' % path)
        for s in self.sections:
            if s[1] and s[1] not in self.helps:
                raise SourceError('%s: section %s: no @help %s' % (path, s[0], s[1]))
        for hid, _, _ in self.options:
            if hid not in self.helps:
                raise SourceError('%s: @options %s: no @help %s' % (path, hid, hid))

    def read(self, path, depth=0):
        if depth > 4:
            raise SourceError('%s: includes nested too deep' % path)
        try:
            lines = open(path, encoding='utf-8').read().split('\n')
        except OSError as e:
            raise SourceError('%s: %s' % (path, e.strerror))
        if lines and lines[-1] == '':
            lines.pop()
        for n, line in enumerate(lines, 1):
            where = '%s:%d' % (path, n)
            if line.startswith('@#'):
                continue
            if line.startswith('@') and not line.startswith('@@'):
                self.directive(line, where, path, depth)
            elif not self.sections:
                if line.strip():
                    raise SourceError('%s: text before the first @section' % where)
            else:
                self.sections[-1][2].append((line, where))

    def directive(self, line, where, path, depth):
        word, _, rest = line[1:].partition(' ')
        rest = rest.strip()
        if word == 'name':
            m = re.match(r'(\S+) - (.+)$', rest)
            if not m:
                raise SourceError('%s: @name NAME - SUMMARY' % where)
            self.name, self.summary = m.groups()
        elif word == 'help':
            hid, _, cmd = rest.partition(' ')
            if not re.match(r'[a-z][a-z0-9_]*$', hid) or not cmd.strip():
                raise SourceError('%s: @help ID COMMAND...' % where)
            self.helps[hid] = cmd.strip()
        elif word == 'options':
            f = rest.split()
            if len(f) != 3:
                raise SourceError('%s: @options ID FILE TABLE' % where)
            self.options.append(tuple(f))
        elif word == 'section':
            m = re.match(r"([A-Z][A-Z' ]*[A-Z])(?:: ([^\[]*[^\[ ]))?(?: \[([a-z][a-z0-9_]*)\])?$", rest)
            if not m:
                raise SourceError('%s: @section TITLE[: SUBTITLE] [ID] (TITLE in capitals)' % where)
            self.sections.append([m.group(1), m.group(3), [], m.group(2)])
        elif word == 'include':
            inc = os.path.normpath(os.path.join(os.path.dirname(path), rest))
            self.files.append(inc)
            if not self.sections:
                raise SourceError('%s: @include before the first @section' % where)
            self.read(inc, depth + 1)
        else:
            raise SourceError('%s: unknown directive @%s' % (where, word))

    def help_lines(self, hid):
        out = []
        for title, sid, lines, _ in self.sections:
            if sid == hid:
                out += lines
        while out and not out[-1][0].strip():
            out.pop()
        return out


# ---- constants -------------------------------------------------------------------

LITERAL = r'(-?(?:0[xX][0-9a-fA-F]+|\d+)[uUlL]*|"(?:[^"\\]|\\.)*")'
DEFINE = re.compile(r'^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+' + LITERAL + r'[ \t]*(?:/\*.*?\*/[ \t]*|//.*)?$', re.M)
ENUMC = re.compile(r'\b(\w+)[ \t]*=[ \t]*' + LITERAL + r'[ \t]*[,}]')
_consts = None


def constants():
    """name -> (value, kind 'int'|'str', header): every literal constant of the tree."""
    global _consts
    if _consts is not None:
        return _consts
    _consts = {}
    seen = {}
    for d in CONST_DIRS:
        for base, _, names in os.walk(os.path.join(ROOT, d)):
            if '/vmlinux' in base:
                continue
            for n in sorted(names):
                if not n.endswith('.h'):
                    continue
                p = os.path.relpath(os.path.join(base, n), ROOT)
                text = open(os.path.join(ROOT, p), errors='replace').read()
                for m in list(DEFINE.finditer(text)) + list(ENUMC.finditer(text)):
                    name, lit = m.group(1), m.group(2)
                    if lit.startswith('"'):
                        val = (bytes(lit[1:-1], 'utf-8').decode('unicode_escape'), 'str')
                    else:
                        val = (str(int(lit.rstrip('uUlL'), 0)), 'int')
                    if name in seen and seen[name] != val:
                        seen[name] = None  # two values: not usable
                        continue
                    seen[name] = val
                    _consts.setdefault(name, (val[0], val[1], p))
    for name, val in seen.items():
        if val is None:
            _consts.pop(name, None)
    return _consts


PLACE = re.compile(r'@@|@([A-Z][A-Z0-9_]*)@')


def expand(page, lines, c_format=False):
    """The help lines with @CONST@ replaced: values, or printf conversions and their arguments."""
    used = []
    out = []
    for line, where in lines:
        def sub(m):
            if m.group(0) == '@@':
                return '@'
            name = m.group(1)
            c = constants().get(name)
            if not c:
                raise SourceError('%s: @%s@: no #define or enum constant of that name with '
                                  'a literal value (one value) in %s' % (where, name, ', '.join(CONST_DIRS)))
            used.append(name)
            if c[2] not in page.files:
                page.files.append(c[2])
            if c_format:
                return '\0%lld\0' if c[1] == 'int' else '\0%s\0'
            return c[0]
        if c_format:
            line = line.replace('%', '%%')
        out.append(PLACE.sub(sub, line))
    return out, used


# ---- the C header ------------------------------------------------------------------

def c_string(text):
    parts = []
    for i, line in enumerate(text.split('\n')):
        if i == len(text.split('\n')) - 1 and line == '':
            break
        s = line.replace('\\', '\\\\').replace('"', '\\"').replace('\0', '')
        parts.append('\t\t"%s\\n"' % s)
    return '\n'.join(parts) if parts else '\t\t""'


def header(page):
    guard = 'SBT_HELP_' + re.sub(r'\W', '_', page.name).upper() + '_H'
    out = ['/* Generated by scripts/gen-help.py from %s: edit that, not this. */' % page.path,
           '#ifndef ' + guard, '#define ' + guard, '', '#include <stdio.h>']
    bodies = []
    incs = set()
    for hid in page.helps:
        lines, used = expand(page, page.help_lines(hid), c_format=True)
        text = '\n'.join(lines) + '\n'
        args = []
        for name in used:
            kind, hdr = constants()[name][1], constants()[name][2]
            incs.add(hdr)
            args.append('(long long)(%s)' % name if kind == 'int' else name)
        body = ['', '/* %s */' % page.helps[hid], 'static inline void sbt_help_%s(FILE *f)' % hid, '{']
        if args:
            body.append('\tfprintf(f,\n%s,\n\t\t%s);' % (c_string(text), ', '.join(args)))
        else:
            body.append('\tfputs(\n%s,\n\t\tf);' % c_string(text))
        body.append('}')
        bodies += body
    out += ['#include "%s"' % h for h in sorted(incs)]
    out += bodies + ['', '#endif', '']
    return '\n'.join(out)


# ---- roff ------------------------------------------------------------------------------

def esc(s):
    """Text for roff: backslashes, minus signs, non-ASCII as \\[uXXXX]."""
    out = []
    for ch in s:
        if ch == '\\':
            out.append('\\e')
        elif ch == '-':
            out.append('\\-')
        elif ord(ch) > 126:
            out.append('\\[u%04X]' % ord(ch))
        else:
            out.append(ch)
    return ''.join(out)


def line_out(s):
    """A text line: one that would start with a control character is protected."""
    s = s.strip()
    return '\\&' + s if s[:1] in ('.', "'") else s


MANREF = re.compile(r"\b(sbtrace[\w-]*|[a-z][\w.-]*)\(([1-8])\)")


def md_inline(s):
    """Markdown inline markup to roff."""
    out = []
    pos = 0
    pat = re.compile(r'`([^`]+)`|\*\*(.+?)\*\*|(?<![\w*])\*(?=\S)([^*]+?)\*(?![\w*])'
                     r'|\[([^\]]+)\]\([^)]+\)|' + MANREF.pattern, re.S)
    for m in pat.finditer(s):
        out.append(esc(s[pos:m.start()]))
        if m.group(1) is not None:
            out.append('\\fB' + esc(m.group(1)) + '\\fP')
        elif m.group(2) is not None:
            out.append('\\fB' + md_inline(m.group(2)) + '\\fP')
        elif m.group(3) is not None:
            out.append('\\fI' + md_inline(m.group(3)) + '\\fP')
        elif m.group(4) is not None:
            out.append(md_inline(m.group(4)))
        else:
            out.append('\\fB' + esc(m.group(5)) + '\\fP(' + m.group(6) + ')')
        pos = m.end()
    out.append(esc(s[pos:]))
    return ''.join(out)


def plain_inline(s):
    """Help text in the man page: man page references in bold, the rest as it is."""
    out = []
    pos = 0
    for m in MANREF.finditer(s):
        out.append(esc(s[pos:m.start()]))
        out.append('\\fB' + esc(m.group(1)) + '\\fP(' + m.group(2) + ')')
        pos = m.end()
    out.append(esc(s[pos:]))
    return ''.join(out)


def tag_inline(s):
    """An option's tag or a usage line: options bold, metavariables italic."""
    out = []
    pos = 0
    for m in re.finditer(r'(?<![\w-])(--?[A-Za-z0-9][\w-]*)|(?<![\w-])([A-Z][A-Z0-9_]*)(?![\w])', s):
        out.append(esc(s[pos:m.start()]))
        if m.group(1):
            out.append('\\fB' + esc(m.group(1)) + '\\fP')
        else:
            out.append('\\fI' + esc(m.group(2)) + '\\fP')
        pos = m.end()
    out.append(esc(s[pos:]))
    return ''.join(out)


def synopsis(lines):
    usages = []
    for line in lines:
        if not line.strip():
            continue
        if line[0].isspace() and usages:
            usages[-1] += ' ' + line.strip()
        else:
            usages.append(re.sub(r'^Usage:\s*', '', line.strip()))
    out = []
    for i, u in enumerate(usages):
        words = u.split()
        k = 0
        while k < len(words) and re.match(r'[a-z][a-z0-9-]*$', words[k]):
            k += 1
        if i:
            out.append('.br')
        out.append('.B ' + esc(' '.join(words[:k])))
        if k < len(words):
            out.append(line_out(tag_inline(' '.join(words[k:]))))
    return out


def indent_of(line):
    return len(line) - len(line.lstrip(' '))


ITEM = re.compile(r'^( +)(\S.*?)( {2,})(\S.*)$')
OPT_START = re.compile(r'^ +-[^\s-]|^ +--\S')


def help_to_man(lines):
    """Help text (plain, preformatted) to man: paragraphs, tagged items, bullets."""
    out = []
    item = None  # the open item: its indent, its text's column (0: not known yet), its tag
    para = False

    def open_tag():
        if item and item['tag'] is not None:
            out.append('.TP')
            out.append(line_out(tag_inline(item['tag'])))
            item['tag'] = None

    for raw in lines:
        line = raw.rstrip()
        if not line.strip():
            open_tag()
            item, para = None, False
            continue
        ind = indent_of(line)
        opt = OPT_START.match(line)
        if item and item['tag'] is not None and item['tag'].endswith(',') and opt:
            item['tag'] += ' ' + line.strip()  # an option list going on
            continue
        if item and ((item['col'] and ind >= item['col']) or (ind > item['indent'] and not opt)):
            if not item['col']:
                item['col'] = ind
            open_tag()
            out.append(line_out(plain_inline(line)))
            continue
        open_tag()
        item = None
        if ind == 0:
            if not para:
                out.append('.PP')
                para = True
            out.append(line_out(plain_inline(line)))
            continue
        para = False
        m = re.match(r'^( +)- (.*)$', line)
        if m:
            out.append('.IP \\(bu 2')
            out.append(line_out(plain_inline(m.group(2))))
            item = {'indent': ind, 'col': ind + 2, 'tag': None}
            continue
        m = ITEM.match(line)
        if m and (opt or len(m.group(2)) <= 12):
            tag = m.group(2)
            out.append('.TP')
            out.append(line_out('\\fB' + esc(tag) + '\\fP' if re.match(r'\d', tag) else tag_inline(tag)))
            out.append(line_out(plain_inline(m.group(4))))
            item = {'indent': ind, 'col': len(m.group(1)) + len(tag) + len(m.group(3)), 'tag': None}
            continue
        if opt:
            item = {'indent': ind, 'col': 0, 'tag': line.strip()}
            continue
        # indented text that is no item: a paragraph of its own, indented
        out.append('.IP "" 4')
        out.append(line_out(plain_inline(line)))
        item = {'indent': ind - 1, 'col': ind, 'tag': None}
    open_tag()
    return out


def split_row(line):
    cells = re.split(r'(?<!\\)\|', line.strip())
    return [c.strip().replace('\\|', '|') for c in cells[1:-1]]


def plain_len(cell):
    return len(re.sub(r'[`*]', '', cell))


def table(rows, where):
    """A table that fits a terminal of 80 columns as a table (tbl), else as a list: a tagged
    paragraph per row, its first cell the tag and the others each under its head's name."""
    head, body = rows[0], [r for r in rows[1:] if not re.match(r'^:?-+:?$', r[0] or '-')]
    n = len(head)
    for r in body:
        if len(r) != n:
            raise SourceError('%s: a table row of %d cells, the head has %d' % (where, len(r), n))
    width = [max(plain_len(r[i]) for r in [head] + body) for i in range(n)]
    cell = lambda text: md_inline(text).replace('|', '\\[ba]') or '\\&'
    if sum(width) + 3 * (n - 1) + 4 <= 70:
        out = ['.PP', '.TS', 'allbox tab(|);', ' '.join('lb' for _ in range(n)),
               ' '.join('l' for _ in range(n)) + ' .']
        out.append('|'.join(cell(h) for h in head))
        out += ['|'.join(cell(c) for c in r) for r in body]
        return out + ['.TE']
    out = []
    for r in body:
        out += ['.TP', line_out(md_inline(r[0]))]
        first = True
        for h, c in zip(head[1:], r[1:]):
            if not c:
                continue
            if not first:
                out.append('.br')
            out.append(line_out(md_inline(c) if n == 2 else '\\fI' + md_inline(h) + ':\\fP ' + md_inline(c)))
            first = False
    return out


def md_to_man(lines):
    """Markdown (the subset above) to man. Inline markup may span the lines of a block."""
    out = []
    block = []      # the open paragraph or bullet: its lines
    nested = False  # inside a nested list (.RS)

    def flush():
        if block:
            text = md_inline('\n'.join(ln.strip() for ln in block))
            out.extend(line_out(t) for t in text.split('\n'))
            del block[:]

    def unnest():
        nonlocal nested
        if nested:
            out.append('.RE')
            nested = False

    kind = None  # None | 'para' | 'bullet' | 'gap' (a blank line inside a list)
    i = 0
    while i < len(lines):
        line, where = lines[i]
        s = line.rstrip()
        if s.startswith('```') or s.startswith('|') or s.startswith('#'):
            flush()
            unnest()
            kind = None
            if s.startswith('```'):
                out += ['.PP', '.RS 4', '.nf']
                i += 1
                while i < len(lines) and not lines[i][0].startswith('```'):
                    t = esc(lines[i][0].rstrip())
                    out.append('\\&' + t if t[:1] in ('.', "'") or not t else t)
                    i += 1
                out += ['.fi', '.RE']
                i += 1
            elif s.startswith('|'):
                rows = []
                while i < len(lines) and lines[i][0].startswith('|'):
                    rows.append(split_row(lines[i][0]))
                    i += 1
                out += table(rows, where)
            else:
                if not re.match(r'#{3,4} \S', s):
                    raise SourceError('%s: headings are "### TITLE" (the sections are @section)' % where)
                out.append('.SS ' + esc(s.lstrip('#').strip()))
                i += 1
            continue
        i += 1
        if not s.strip():
            flush()
            kind = 'gap' if kind == 'bullet' else None
            continue
        m = re.match(r'^( *)- (.*)$', s)
        ind = indent_of(s)
        if m and len(m.group(1)) in (0, 2):
            flush()
            if m.group(1) and not nested:
                out.append('.RS 2')
                nested = True
            elif not m.group(1):
                unnest()
            out.append('.IP \\(bu 2')
            block.append(m.group(2))
            kind = 'bullet'
            continue
        if kind == 'bullet' and ind >= (4 if nested else 2):
            block.append(s)
            continue
        if kind == 'gap' and ind >= (4 if nested else 2):
            out.append('.IP "" 2')  # a bullet's second paragraph
            block.append(s)
            kind = 'bullet'
            continue
        if kind != 'para':
            flush()
            unnest()
            out.append('.PP')
            kind = 'para'
        block.append(s)
    flush()
    unnest()
    return out


def man(page, version, date):
    parts = {}
    order = []
    seen = {}
    for title, hid, lines, sub in page.sections:
        if hid:
            lines = list(zip(expand(page, lines)[0], [w for _, w in lines]))
            body = synopsis([ln for ln, _ in lines]) if title == 'SYNOPSIS' else help_to_man([ln for ln, _ in lines])
        else:
            lines = list(zip(expand(page, lines)[0], [w for _, w in lines]))
            body = synopsis([ln for ln, _ in lines]) if title == 'SYNOPSIS' else md_to_man(lines)
        if title not in parts:
            parts[title] = []
            order.append(title)
        elif title == 'SYNOPSIS' and body:
            body = ['.br'] + body
        if sub:
            body = ['.SS ' + esc(sub)] + body
        if body in seen.get(title, []):
            continue  # the same text again (an @include in two helps): once in the page
        seen.setdefault(title, []).append(body)
        parts[title] += body
    for need in ('SYNOPSIS', 'DESCRIPTION', 'EXIT STATUS', 'SEE ALSO'):
        if need not in parts:
            raise SourceError('%s: no %s section' % (page.path, need))
    titles = [t for t in ORDER if t in parts] + [t for t in order if t not in ORDER + LATE] + \
        [t for t in LATE if t in parts]
    out = ["'\\\" t",
           '.\\" Generated by scripts/gen-help.py from %s: edit that, not this.' % page.path,
           '.TH %s 1 "%s" "sbtrace %s" "User Commands"' % (esc(page.name.upper()), date, version),
           '.\\" names and identifiers are not hyphenated', '.nh',
           '.SH NAME', '%s \\- %s' % (esc(page.name), esc(page.summary))]
    for t in titles:
        out.append('.SH ' + ('"%s"' % t if ' ' in t else t))
        body = parts[t]
        # a section starts in a paragraph of its own: no empty paragraph first
        while body and body[0] == '.PP':
            body = body[1:]
        out += body
    return '\n'.join(out) + '\n'


# ---- getopt tables ----------------------------------------------------------------

def longopts(path, table):
    text = open(os.path.join(ROOT, path), errors='replace').read()
    found = re.findall(r'struct\s+option\s+' + re.escape(table) + r'\s*\[\s*\]\s*=\s*\{(.*?)\n\s*\};', text, re.S)
    if len(found) != 1:
        raise SourceError('%s: %s getopt table %s' % (path, 'no' if not found else 'more than one', table))
    return re.findall(r'\{\s*"([^"]+)"\s*,', found[0])


# ---- main -----------------------------------------------------------------------------

def write(path, text):
    os.makedirs(os.path.dirname(path) or '.', exist_ok=True)
    with open(path + '.tmp', 'w') as f:
        f.write(text)
    os.replace(path + '.tmp', path)


def deps(page, out, depfile):
    if depfile:
        files = ' '.join(page.files + [os.path.relpath(__file__)])
        write(depfile, '%s: %s\n%s\n' % (out, files, '\n'.join('%s:' % f for f in page.files[1:])))


def main(argv):
    try:
        if len(argv) >= 3 and argv[0] == 'header':
            page = Page(argv[1])
            write(argv[2], header(page))
            deps(page, argv[2], argv[3] if len(argv) > 3 else None)
        elif len(argv) >= 3 and argv[0] == 'man':
            page = Page(argv[1])
            text = man(page, os.environ.get('VERSION', 'dev'), os.environ.get('DATE', ''))
            write(argv[2], text)
            deps(page, argv[2], argv[3] if len(argv) > 3 else None)
        elif len(argv) == 3 and argv[0] == 'text':
            page = Page(argv[1])
            if argv[2] not in page.helps:
                raise SourceError('%s: no @help %s' % (argv[1], argv[2]))
            sys.stdout.write('\n'.join(expand(page, page.help_lines(argv[2]))[0]) + '\n')
        elif len(argv) == 2 and argv[0] == 'list':
            page = Page(argv[1])
            for hid, cmd in page.helps.items():
                print('help', hid, cmd)
            for o in page.options:
                print('options', *o)
        elif len(argv) == 3 and argv[0] == 'longopts':
            print('\n'.join(longopts(argv[1], argv[2])))
        else:
            print(__doc__.strip(), file=sys.stderr)
            return 2
    except SourceError as e:
        print('gen-help: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
