#!/usr/bin/env python3
"""mountcheck.py — what a cellfs mount must show, and the checks the mount tests run against it.

The expected tree is computed here from a store dump (dump_store) with a Python rewrite of the name
rules in fs/name.h: no code of fs/ is used, so a bug shared by the daemon and its unit tests still shows.
Subcommands (the *.sh scripts in this directory mount, call these, and unmount):

  tree DUMPDIR MNT STATE       walk the mount (fd-relative, so 2048-deep paths work) and compare every
                               entry with the dump: names and order, type, size, mtime/ctime (µs), nlink,
                               contents (sha256), inode uniqueness; then find, du, stat, ls, cat and
                               getfattr output; unlisted Q@TS names; non-canonical names are ENOENT.
                               Writes inode numbers and directory times to STATE.
  remount DUMPDIR MNT STATE    the same inode numbers and directory times after a remount.
  bigdir DUMPDIR MNT PID DB    100k entries in one directory, listed once each in key order (also three
                               at once), resuming at any offset, changed mid-listing; the daemon's RSS; a
                               prefix of 100k rows with three next segments costs a few requests.
  cellctl MNT DB TABLE         `cellctl read`/`lookup`/`count`/`ls` against cat/stat/ls through the mount.
  asof ROOT DB TABLE TIME US [copy]  an as-of mount (or a copy of one) against `cellctl read asof=TIME` and
                               against the present cells at or before US µs; newer names ENOENT.
  follow MNT DB                cellctl changes the store while mounted (set, rewrite in place, deletecolumn,
                               deleterow, createtable, createfamily, setgcpolicy, deletefamily,
                               deletetable, deleteallrows); the mount follows, no stale cache.
  copy DUMPDIR TABLE KIND PATH a backup on disk (KIND dir: cp -a/rsync -a; pax, gnu: tar archives) holds
                               exactly TABLE's listed names, sizes, contents and mtimes (ns; s for gnu).
  restored LABEL SRCDUMP GOTDUMP TABLE MODE STATUS ERRFILE
                               a table restored into an empty mount against the original, cell for cell and
                               family for family; MODE exact, seconds (GNU tar) or noname (see the function).
  crashload TABLEDIR ROUND LOG [N]  write files as `mkdir -p; echo v > f` would, logging each once close()
                               returned; stops at the first error (the daemon killed under it).
  crash DUMPDIR MNT TABLE LOG [ROUND]  after the kill and a remount: every logged write is in the store, and
                               in the mount (ROUND: that round's rows only).

Environment: CELLCTL (the cellctl binary). Exit status 0 (all good) or 1 (mismatches, listed on stderr).
"""
import errno
import hashlib
import json
import os
import re
import stat as S
import subprocess
import sys
import time

NAME_MAX = 255
SHORT_PREFIX = 200
PATH_MAX = 4096

failures = []


def fail(msg):
    failures.append(msg)


def done(what):
    if failures:
        for m in failures[:60]:
            print('FAIL:', m, file=sys.stderr)
        if len(failures) > 60:
            print('FAIL: ... and %d more' % (len(failures) - 60), file=sys.stderr)
        print('%s: %d mismatches' % (what, len(failures)), file=sys.stderr)
        sys.exit(1)
    print('%s: ok' % what)


def show(path):
    """A path tuple for messages."""
    return '/'.join(p.decode('utf-8', 'backslashreplace') if isinstance(p, bytes) else p for p in path)[:300]


# ---- the name rules of fs/name.h, written again -------------------------------------------------------

def fnv1a64(b):
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def utf8_len(b, i):
    """Length of the valid UTF-8 sequence starting at b[i] (2..4), or 0. Python's strict decoder rejects
    overlongs, surrogates and code points above U+10FFFF, as Unicode's table 3-7 does."""
    c = b[i]
    n = 2 if 0xC0 <= c <= 0xDF else 3 if 0xE0 <= c <= 0xEF else 4 if 0xF0 <= c <= 0xF7 else 0
    if not n or i + n > len(b):
        return 0
    try:
        b[i:i + n].decode('utf-8')
    except UnicodeDecodeError:
        return 0
    return n


def units(b, qual, force):
    """B as name units: raw ASCII bytes, raw UTF-8 sequences, %XX escapes."""
    out, i = [], 0
    while i < len(b):
        c, k = b[i], 1
        if c < 0x80:
            raw = 0x20 <= c and c != 0x7F and c not in b'/%' and not (qual and c == 0x40)
        else:
            k = utf8_len(b, i)
            raw = k > 0
        if i < force or not raw:
            out.append(b'%%%02X' % c)
            i += 1
        else:
            out.append(b[i:i + k])
            i += k
    return out


IDENT = re.compile(rb'[_a-zA-Z0-9][-_.a-zA-Z0-9]*\Z')


def encode(b, qual=False, families=(), limit=NAME_MAX):
    """The name of key segment (qual False; FAMILIES: the table's) or qualifier B."""
    if not b:
        return b'%'
    force = 0
    if not qual and IDENT.match(b) and b in families:
        force = 1
    if b in (b'.', b'..'):
        force = len(b)
    u = units(b, qual, force)
    full = b''.join(u)
    if len(full) <= limit:
        return full
    pre = b''
    for x in u:
        if len(pre) + len(x) > SHORT_PREFIX:
            break
        pre += x
    return pre + b'%~' + b'%016X' % fnv1a64(b)


def version_name(q, ts):
    t = b'%016d' % ts
    return encode(q, qual=True, limit=NAME_MAX - 1 - len(t)) + b'@' + t


# ---- the dump and the tree it implies --------------------------------------------------------------------

class Table:
    def __init__(self, name, delim, created):
        self.name, self.delim, self.created = name, delim, created
        self.families = {}  # name (bytes) -> canonical GC policy (bytes)
        self.rows = {}      # row key -> [(family, qualifier, ts, len, offset)], in the store's order


def unhex(s):
    return b'' if s == b'-' else bytes.fromhex(s.decode())


def load_dump(d):
    tables = {}
    with open(os.path.join(d, 'dump.txt'), 'rb') as f:
        for line in f:
            p = line.split()
            if p[0] == b'table':
                tables[p[1]] = Table(p[1], int(p[2], 16), int(p[3]))
            elif p[0] == b'family':
                tables[p[1]].families[p[2]] = unhex(p[3])
            elif p[0] == b'cell':
                tables[p[1]].rows.setdefault(unhex(p[2]), []).append(
                    (p[3], unhex(p[4]), int(p[5]), int(p[6]), int(p[7])))
    return tables


class Ent:
    __slots__ = ('dir', 'size', 'mtime', 'nlink', 'val', 'fams', 'segs', 'children')

    def __init__(self, isdir, size, mtime, nlink, val=None):
        self.dir, self.size, self.mtime, self.nlink, self.val = isdir, size, mtime, nlink, val
        self.fams, self.segs, self.children = [], {}, []


def expected(tables):
    """Path (tuple of names, bytes) -> Ent; and [(family dir path, unlisted newest Q@TS name, bare path)]."""
    ents = {(): Ent(True, 0, 0, 2 + len(tables))}
    ents[()].children = sorted(tables)
    unlisted = []
    for tname in sorted(tables):
        t = tables[tname]
        top = (tname,)
        ents[top] = Ent(True, 0, t.created, 1)
        for row, cells in t.rows.items():
            path = top
            for seg in row.split(bytes([t.delim])):
                name = encode(seg, families=t.families)
                parent, path = path, path + (name,)
                if path not in ents:
                    ents[path] = Ent(True, 0, t.created, 1)
                    ents[parent].segs[name] = None
            byfam = {}
            for c in cells:
                byfam.setdefault(c[0], []).append(c)
            for fam, fc in byfam.items():
                fp = path + (fam,)
                ents[path].fams.append(fam)
                fe = ents[fp] = Ent(True, 0, max(c[2] for c in fc), 2)
                prevq = None
                for (_, q, ts, n, off) in fc:
                    name = encode(q, qual=True) if q != prevq else version_name(q, ts)
                    if q != prevq:
                        unlisted.append((fp, version_name(q, ts), fp + (name,)))
                    prevq = q
                    ents[fp + (name,)] = Ent(False, n, ts, 1, (off, n))
                    fe.children.append(name)
    for p, e in ents.items():
        if e.dir and p and not e.children:
            e.children = e.fams + list(e.segs)
    return ents, unlisted


class Values:
    def __init__(self, d):
        self.f = open(os.path.join(d, 'values.bin'), 'rb')

    def get(self, ref):
        self.f.seek(ref[0])
        return self.f.read(ref[1])

    def sha(self, ref):
        return hashlib.sha256(self.get(ref)).hexdigest()


# ---- the mount, walked ------------------------------------------------------------------------------------

class Got:
    __slots__ = ('mode', 'size', 'mtime_ns', 'ctime_ns', 'nlink', 'ino', 'children', 'sha')

    def __init__(self, st):
        self.mode, self.size, self.nlink, self.ino = st.st_mode, st.st_size, st.st_nlink, st.st_ino
        self.mtime_ns, self.ctime_ns = st.st_mtime_ns, st.st_ctime_ns
        self.children, self.sha = None, None


def read_fd(fd):
    h, n = hashlib.sha256(), 0
    while True:
        b = os.read(fd, 1 << 20)
        if not b:
            return h.hexdigest(), n
        h.update(b)
        n += len(b)


def walk(mnt, read=True):
    """Every entry under MNT, by descriptor-relative calls (paths beyond PATH_MAX work): path tuple -> Got,
    with each file's sha256 if READ."""
    sys.setrecursionlimit(20000)
    got = {}
    root = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    got[()] = Got(os.fstat(root))

    def visit(dfd, path):
        names = [os.fsencode(n) for n in os.listdir(dfd)]
        got[path].children = names
        for n in names:
            p = path + (n,)
            try:
                st = os.stat(n, dir_fd=dfd, follow_symlinks=False)
            except OSError as e:
                fail('%s: listed but stat fails: %s' % (show(p), e))
                continue
            g = got[p] = Got(st)
            if S.S_ISDIR(st.st_mode):
                fd = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=dfd)
                try:
                    visit(fd, p)
                finally:
                    os.close(fd)
            elif read:
                fd = os.open(n, os.O_RDONLY, dir_fd=dfd)
                try:
                    g.sha, nread = read_fd(fd)
                finally:
                    os.close(fd)
                if nread != st.st_size:
                    fail('%s: read %d bytes, stat says %d' % (show(p), nread, st.st_size))
    try:
        visit(root, ())
    finally:
        os.close(root)
    return got


def compare_tree(ents, got, vals, read=True):
    """The walk against the expected tree: the same paths, each with the right attributes."""
    missing = [p for p in ents if p not in got]
    extra = [p for p in got if p not in ents]
    for p in missing[:20]:
        fail('missing from the mount: %s' % show(p))
    for p in extra[:20]:
        fail('not in the store, yet in the mount: %s' % show(p))
    if len(missing) > 20 or len(extra) > 20:
        fail('%d missing, %d extra entries in all' % (len(missing), len(extra)))
    for p, e in ents.items():
        g = got.get(p)
        if g is None:
            continue
        want_mode = (S.S_IFDIR | 0o755) if e.dir else (S.S_IFREG | 0o644)
        if g.mode != want_mode:
            fail('%s: mode %o, want %o' % (show(p), g.mode, want_mode))
        if g.size != e.size:
            fail('%s: size %d, want %d' % (show(p), g.size, e.size))
        if g.mtime_ns != e.mtime * 1000 or g.ctime_ns != e.mtime * 1000:
            fail('%s: mtime %d ns ctime %d ns, want %d µs' % (show(p), g.mtime_ns, g.ctime_ns, e.mtime))
        if g.nlink != e.nlink:
            fail('%s: nlink %d, want %d' % (show(p), g.nlink, e.nlink))
        if e.dir and g.children is not None and g.children != e.children:
            if sorted(g.children) != sorted(e.children):
                fail('%s: lists %s, want %s' % (show(p), [show((c,)) for c in g.children][:10],
                                                [show((c,)) for c in e.children][:10]))
            else:
                fail('%s: lists the right names in the wrong order: %s, want %s' % (
                    show(p), [show((c,)) for c in g.children][:10], [show((c,)) for c in e.children][:10]))
        if read and not e.dir and g.sha is not None and g.sha != vals.sha(e.val):
            fail('%s: contents differ from the store' % show(p))
    inos = {}
    for p, g in got.items():
        if g.ino in inos:
            fail('inode %d shared by %s and %s' % (g.ino, show(inos[g.ino]), show(p)))
        inos[g.ino] = p


# ---- the same through the standard tools ---------------------------------------------------------------

def run(argv, cwd=None, ok=(0,), stdin=None):
    r = subprocess.run(argv, cwd=cwd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode not in ok or r.stderr:
        fail('%s: exit %d, stderr %r' % (' '.join(map(str, argv))[:200], r.returncode, r.stderr[:500]))
    return r.stdout


def ts_ns(s):
    """find's %T@ / stat's %.9Y: seconds.fraction -> ns, exactly."""
    sec, _, frac = s.partition(b'.')
    return int(sec) * 10**9 + int((frac + b'000000000')[:9])


def mount_path(mnt, p):
    return os.path.join(os.fsencode(mnt), *p) if p else os.fsencode(mnt)


def check_find(mnt, ents):
    out = run(['find', mnt, '-printf', r'%P\0%s %T@ %C@ %y %n %i\0'])
    f = out.split(b'\0')[:-1]
    seen, inos = {}, {}
    for path, attrs in zip(f[0::2], f[1::2]):
        p = tuple(path.split(b'/')) if path else ()
        if p in seen:
            fail('find: %s twice' % show(p))
        size, mt, ct, typ, nlink, ino = attrs.split()
        seen[p] = int(ino)
        e = ents.get(p)
        if e is None:
            fail('find: unexpected %s' % show(p))
            continue
        if (int(size), ts_ns(mt), ts_ns(ct), typ, int(nlink)) != (e.size, e.mtime * 1000, e.mtime * 1000,
                                                                   b'd' if e.dir else b'f', e.nlink):
            fail('find: %s: %s, want size %d mtime %d µs %s nlink %d' % (
                show(p), attrs.decode(), e.size, e.mtime, 'd' if e.dir else 'f', e.nlink))
        if int(ino) in inos:
            fail('find: inode %s of %s and %s' % (ino.decode(), show(p), show(inos[int(ino)])))
        inos[int(ino)] = p
    for p in ents:
        if p not in seen:
            fail('find: missing %s' % show(p))
    return seen


def check_du(mnt, ents):
    total = {}
    for p, e in ents.items():
        if not e.dir:
            for i in range(len(p) + 1):
                total[p[:i]] = total.get(p[:i], 0) + e.size
    out = run(['du', '-ab', mnt])
    base = os.fsencode(mnt)
    n = 0
    for line in out.split(b'\n')[:-1]:
        size, path = line.split(b'\t', 1)
        rel = path[len(base) + 1:] if path != base else b''
        p = tuple(rel.split(b'/')) if rel else ()
        if p not in ents:
            fail('du: unexpected %s' % show(p))
        elif int(size) != total.get(p, 0):
            fail('du: %s: %s bytes, want %d' % (show(p), size.decode(), total.get(p, 0)))
        n += 1
    if n != len(ents):
        fail('du: %d lines, want %d' % (n, len(ents)))


def check_stat(mnt, ents, inodes):
    """stat(1) on every path it can take (relative to MNT, under PATH_MAX); descriptor-relative walks
    covered the rest."""
    paths = [p for p in ents if p and len(b'/'.join(p)) < PATH_MAX - 1]
    out = run(['xargs', '-0', 'stat', '--printf', r'%n\0%s %.9Y %.9Z %h %F %i\0'], cwd=mnt,
              stdin=b'\0'.join(b'/'.join(p) for p in paths) + b'\0')
    f = out.split(b'\0')[:-1]
    if len(f) != 2 * len(paths):
        fail('stat: %d results for %d paths' % (len(f) // 2, len(paths)))
    for path, attrs in zip(f[0::2], f[1::2]):
        p = tuple(path.split(b'/'))
        e = ents[p]
        size, mt, ct, nlink, kind = attrs.split(b' ', 4)
        kind, ino = kind.rsplit(b' ', 1)
        want = b'directory' if e.dir else b'regular empty file' if not e.size else b'regular file'
        if (int(size), ts_ns(mt), ts_ns(ct), int(nlink), kind) != (e.size, e.mtime * 1000, e.mtime * 1000,
                                                                   e.nlink, want):
            fail('stat: %s: %s, want size %d mtime %d µs nlink %d %s' % (
                show(p), attrs.decode(), e.size, e.mtime, e.nlink, want.decode()))
        if inodes.get(p) != int(ino):
            fail('stat: %s: inode %s, find said %s' % (show(p), ino.decode(), inodes.get(p)))


LS_LINE = re.compile(rb'([d-])([rwx-]{9}) +(\d+) +\S+ +\S+ +(\d+) +(\d+)\.(\d{9}) (.*)\Z')


def check_ls(mnt, ents, tops):
    """ls -laRU of each table in TOPS: names in directory order (".", ".." first), type, permissions,
    nlink, size, mtime."""
    for top in tops:
        out = run(['ls', '-laRU', '--quoting-style=literal', '--time-style=+%s.%N', top], cwd=mnt)
        for block in out.split(b'\n\n'):
            lines = block.split(b'\n')
            head = lines[0].rstrip(b':')
            p = tuple(head.split(b'/'))
            e = ents.get(p)
            if e is None or not e.dir:
                fail('ls: unexpected directory %s' % show(p))
                continue
            names = []
            for line in lines[1:]:
                if not line or line.startswith(b'total '):
                    continue
                m = LS_LINE.match(line)
                if not m:
                    fail('ls: %s: cannot parse %r' % (show(p), line[:100]))
                    continue
                typ, perm, nlink, size, sec, ns, name = m.groups()
                names.append(name)
                if name in (b'.', b'..'):
                    continue
                c = ents.get(p + (name,))
                if c is None:
                    fail('ls: unexpected %s' % show(p + (name,)))
                    continue
                want = (b'd' if c.dir else b'-', b'rwxr-xr-x' if c.dir else b'rw-r--r--', c.nlink, c.size,
                        c.mtime * 1000)
                if (typ, perm, int(nlink), int(size), int(sec) * 10**9 + int(ns)) != want:
                    fail('ls: %s: %r' % (show(p + (name,)), line[:120]))
            if names != [b'.', b'..'] + e.children:
                fail('ls: %s lists %d names, want ., .. and %d (or another order)' % (show(p), len(names),
                                                                                     len(e.children)))


def check_pread(mnt, ents, vals):
    """Reads at offsets, across page and chunk boundaries and past the end, of every file over 1 MiB."""
    n = 0
    for p, e in ents.items():
        if e.dir or e.size < (1 << 20):
            continue
        want = vals.get(e.val)
        fd = os.open(mount_path(mnt, p), os.O_RDONLY)
        try:
            for off, ln in ((0, 1), (4095, 2), (131071, 131074), (1 << 20, 4097), (e.size - 3, 10),
                            (e.size, 5), (e.size + 4096, 1), (e.size // 2 + 17, 1 << 20)):
                got = os.pread(fd, ln, off)
                n += 1
                if got != want[off:off + ln]:
                    fail('%s: pread(%d, %d) gives %d bytes that differ' % (show(p), ln, off, len(got)))
        finally:
            os.close(fd)
    return n


def check_cat(mnt, ents, vals):
    """cat(1) of every file reachable by a path under PATH_MAX."""
    n = 0
    for p, e in ents.items():
        if e.dir or len(b'/'.join(p)) >= PATH_MAX - 1:
            continue
        out = run(['cat', b'/'.join(p)], cwd=mnt)
        if hashlib.sha256(out).hexdigest() != vals.sha(e.val):
            fail('cat: %s: %d bytes differ from the store\'s %d' % (show(p), len(out), e.size))
        n += 1
    return n


AWK_SCHEMA = {b'user.cellfs.delimiter': b'#', b'user.cellfs.family.MD': b'never',
              b'user.cellfs.family.cf': b'maxversions=60',
              b'user.cellfs.family.g': b'maxversions=2 and maxage=1d or maxversions=5',  # (canonical: no group first)
              b'user.cellfs.family.meta': b'maxage=36500d or maxversions=1000',
              b'user.cellfs.family.unused': b'never', b'user.cellfs.family.x-y.z': b'never'}


def check_xattrs(mnt, tables):
    """getfattr -d on each table directory: the delimiter and every family's canonical GC policy; nothing
    on other directories and files; the root's counters hidden from listings but readable by name."""
    for tname, t in tables.items():
        out = run(['getfattr', '--absolute-names', '-d', '-m', '-', '-e', 'hex', mount_path(mnt, (tname,))])
        got = {}
        for line in out.split(b'\n')[1:]:
            if line:
                k, _, v = line.partition(b'=')
                got[k] = bytes.fromhex(v[2:].decode())
        want = {b'user.cellfs.delimiter': bytes([t.delim])}
        for f, gc in t.families.items():
            want[b'user.cellfs.family.' + f] = gc
        if got != want:
            fail('getfattr %s: %r, want %r' % (tname.decode(), got, want))
        if tname == b'awk' and got != AWK_SCHEMA:  # what gen_awkward.c asked for, in canonical form
            fail('getfattr awk: %r, want %r' % (got, AWK_SCHEMA))
    out = run(['getfattr', '--absolute-names', '-d', '-m', '-', mnt])
    if out:
        fail('getfattr -d of the root lists %r' % out)
    out = run(['getfattr', '--absolute-names', '--only-values', '-n', 'user.cellfs.stats', mnt])
    if not out.startswith(b'lookup '):
        fail('user.cellfs.stats: %r' % out[:100])


def check_fullnames(mnt, tables, ents):
    """user.cellfs.name: every entry whose name is a short form carries its whole bytes (what cp -a, tar
    --xattrs and rsync -X copy to restore it), and lists it; entries with a full name below a table list no
    attribute."""
    want = {}
    for tname, t in tables.items():
        for row, cells in t.rows.items():
            path = (tname,)
            for seg in row.split(bytes([t.delim])):
                path += (encode(seg, families=t.families),)
                if b'%~' in path[-1]:
                    want[path] = seg
            for (fam, q, ts, _, _) in cells:
                for name in (encode(q, qual=True), version_name(q, ts)):
                    if b'%~' in name:
                        want[path + (fam, name)] = q
    n = 0
    for p, b in sorted(want.items()):
        if p not in ents or len(b'/'.join(p)) >= PATH_MAX - 200:
            continue
        f = mount_path(mnt, p)
        if os.listxattr(f) != ['user.cellfs.name']:
            fail('listxattr %s: %r' % (p[-1][:80], os.listxattr(f)))
        if os.getxattr(f, 'user.cellfs.name') != b:
            fail('getxattr %s user.cellfs.name: not its %d bytes' % (p[-1][:80], len(b)))
        n += 1
    plain = [p for p in sorted(ents) if len(p) > 1 and p not in want and len(b'/'.join(p)) < PATH_MAX - 200]
    for p in plain[::max(1, len(plain) // 300)]:
        if os.listxattr(mount_path(mnt, p)):
            fail('listxattr %s: %r, want nothing' % (p[-1][:80], os.listxattr(mount_path(mnt, p))))
    return n


def check_names(mnt, ents, unlisted, tables, vals):
    """Unlisted newest Q@TS names work; non-canonical spellings of every listed name are ENOENT."""
    for fp, vname, bare in unlisted:
        p = fp + (vname,)
        try:
            st = os.stat(mount_path(mnt, p)) if len(b'/'.join(p)) < PATH_MAX - 200 else None
        except OSError as e:
            fail('%s: the newest version by its Q@TS name: %s' % (show(p), e))
            continue
        if st is not None and (st.st_size, st.st_mtime_ns) != (ents[bare].size, ents[bare].mtime * 1000):
            fail('%s: size %d mtime %d, want those of %s' % (show(p), st.st_size, st.st_mtime_ns, show(bare)))
        if st is not None:
            with open(mount_path(mnt, p), 'rb') as f:
                if hashlib.sha256(f.read()).hexdigest() != vals.sha(ents[bare].val):
                    fail('%s: contents differ from %s' % (show(p), show(bare)))
    unl = {fp + (vname,) for fp, vname, _ in unlisted}
    tried = 0
    for p, e in ents.items():
        if not e.dir or not p or len(p) > 24:  # (the deep table's 2048 levels all look alike)
            continue
        t = tables[p[0]]
        try:
            dfd = os.open(mount_path(mnt, p), os.O_RDONLY | os.O_DIRECTORY)
        except OSError as x:
            fail('%s: %s' % (show(p), x))
            continue
        try:
            for name in e.children:
                for v in variants(name, t.delim):
                    q = p + (v,)
                    if v in (b'.', b'..') or q in ents or q in unl or b'/' in v or b'\0' in v:
                        continue
                    tried += 1
                    try:
                        os.stat(v, dir_fd=dfd, follow_symlinks=False)
                        fail('%s: a non-canonical name that resolves' % show(q))
                    except OSError as x:
                        want = errno.ENAMETOOLONG if len(v) > NAME_MAX else errno.ENOENT
                        if x.errno != want:
                            fail('%s: %s, want %s' % (show(q), x, errno.errorcode[want]))
        finally:
            os.close(dfd)
    return tried


ESC = re.compile(rb'%([0-9A-F]{2})')


def variants(name, delim):
    """Spellings of NAME that are not canonical for anything else in its directory (the caller removes
    those that are): lower-case hex, an escape undone, a needless escape, junk after '%', a short form's
    hash changed, a delimiter escaped inside a segment, version timestamps of the wrong width."""
    out = []
    for m in ESC.finditer(name):
        s, x = m.start(), m.group(1)
        if x.lower() != x:
            out.append(name[:s] + b'%' + x.lower() + name[m.end():])
        out.append(name[:s] + bytes([int(x, 16)]) + name[m.end():])
    for i, c in enumerate(name):
        if c != 0x25 and c < 0x80 and c != 0x40:
            out.append(name[:i] + b'%%%02X' % c + name[i + 1:])
            break
    out += [name + b'%', name + b'%G0', b'%' + name, name + b'%%%02X' % delim, b'%%%02X' % delim + name]
    m = re.search(rb'%~([0-9A-F]{16})', name)
    if m:
        h = m.group(1)
        out.append(name[:m.start(1)] + (b'0' if h[0:1] != b'0' else b'1') + h[1:] + name[m.end(1):])
        if re.search(rb'[A-F]', h):
            out.append(name[:m.start(1)] + h.lower() + name[m.end(1):])
        out.append(name[:m.start()] + name[m.end():])
    m = re.search(rb'@(\d+)\Z', name)
    if m:
        ts = m.group(1)
        out += [name[:m.start(1)] + b'0' + ts, name[:m.start(1)] + ts.lstrip(b'0')[:15] + b'x',
                name[:m.start(1)] + ts[1:], name[:m.start(1)] + b'%0*d' % (len(ts), int(ts) + 1)]
    else:
        out.append(name + b'@' + b'%015d' % 1)
        out.append(name + b'@' + b'%017d' % 1)
    return out


def save_state(path, got):
    with open(path, 'w') as f:
        json.dump({'/'.join(x.hex() for x in p): [g.ino, g.mtime_ns, S.S_ISDIR(g.mode)] for p, g in got.items()}, f)


def cmd_tree(dumpdir, mnt, state):
    tables = load_dump(dumpdir)
    ents, unlisted = expected(tables)
    vals = Values(dumpdir)
    t0 = time.monotonic()
    got = walk(mnt, read=True)
    compare_tree(ents, got, vals)
    t1 = time.monotonic()
    inodes = check_find(mnt, ents)
    check_du(mnt, ents)
    check_stat(mnt, ents, inodes)
    check_ls(mnt, ents, [t for t in sorted(tables) if t != b'deep'])
    ncat = check_cat(mnt, ents, vals)
    npread = check_pread(mnt, ents, vals)
    check_xattrs(mnt, tables)
    nfull = check_fullnames(mnt, tables, ents)
    t2 = time.monotonic()
    tried = check_names(mnt, ents, unlisted, tables, vals)
    t3 = time.monotonic()
    save_state(state, got)
    print('tree: %d entries (%d files), %d read with cat, %d preads, %d whole names of short forms, %d unlisted '
          'Q@TS, %d non-canonical names tried; walk %.1fs, tools %.1fs, names %.1fs' % (
              len(ents), sum(not e.dir for e in ents.values()), ncat, npread, nfull, len(unlisted), tried, t1 - t0,
              t2 - t1, t3 - t2))
    done('tree')


def cmd_remount(dumpdir, mnt, state):
    with open(state) as f:
        before = json.load(f)
    got = walk(mnt, read=False)
    now = {'/'.join(x.hex() for x in p): [g.ino, g.mtime_ns, S.S_ISDIR(g.mode)] for p, g in got.items()}
    if set(now) != set(before):
        fail('the remounted tree has other paths: %d vs %d' % (len(now), len(before)))
    for k, v in before.items():
        w = now.get(k)
        if w and w[0] != v[0]:
            fail('%s: inode %d, was %d before the remount' % (k[:80], w[0], v[0]))
        if w and w[1] != v[1]:
            fail('%s: mtime %d, was %d before the remount' % (k[:80], w[1], v[1]))
    print('remount: %d inode numbers and times compared' % len(before))
    done('remount')


# ---- backups with cp -a, tar and rsync ---------------------------------------------------------------------

def cell_str(row, fam, q, ts):
    r, qs = repr(row)[2:-1], repr(q)[2:-1]
    return '%s %s:%s @%d' % (r[:60] + ('...(%d bytes)' % len(row) if len(row) > 60 else ''), fam.decode(),
                             qs[:60] + ('...(%d bytes)' % len(q) if len(q) > 60 else ''), ts)


def table_cells(dumpdir, tname):
    """(table or None, {(row, family, qualifier, ts): sha256 of the value}, Values)."""
    tables = load_dump(dumpdir)
    vals = Values(dumpdir)
    t = tables.get(tname)
    cells = {}
    if t:
        for row, cs in t.rows.items():
            for (fam, q, ts, n, off) in cs:
                cells[(row, fam, q, ts)] = hashlib.sha256(vals.get((off, n))).hexdigest()
    return t, cells


def check_schema(label, want, got):
    if got is None:
        fail('%s: the restored store has no table %s' % (label, want.name.decode()))
        return
    if got.delim != want.delim:
        fail('%s: delimiter %r, want %r' % (label, chr(got.delim), chr(want.delim)))
    if got.families != want.families:
        fail('%s: families and GC policies %r, want %r' % (label, got.families, want.families))


def newest_of(cells):
    """(row, family, qualifier) -> the newest timestamp."""
    newest = {}
    for (row, fam, q, ts) in cells:
        k = (row, fam, q)
        if ts > newest.get(k, -1):
            newest[k] = ts
    return newest


NOISE = re.compile(rb'Cannot change ownership|Cannot change mode|preserving (times|permissions|ownership) for'
                   rb'|Exiting with failure status|some files/attrs were not transferred|Skipping any contents')


def reported(t, k, errl):
    """Whether a line of the tool's stderr (other than about ownership, modes and directory times) names the
    file of cell K = (row, family, qualifier, ts) of table T (or rsync's temporary file for it), or a
    directory above it."""
    segs = [encode(s, families=t.families) for s in k[0].split(bytes([t.delim]))]
    names = [encode(k[2], qual=True), version_name(k[2], k[3])]
    paths = [b'/'.join(segs[:i]) for i in range(1, len(segs) + 1)]
    paths += [b'/'.join(segs + [k[1], n]) for n in names]
    for line in errl:
        if NOISE.search(line):
            continue
        # undo the tools' quoting of bytes: cp's 'a'$'\302\205', tar's a\302\205, rsync's a\#302\#205
        line = re.sub(rb"\\#?([0-7]{3})", lambda m: bytes([int(m.group(1), 8) & 0xFF]), line.replace(b"'$'", b''))
        line = line.replace(b'\\\\', b'\\')  # tar's back\\slash
        for n in names:  # rsync's temporary file .NAME.XXXXXX (NAME if it starts with '.'; long ones cut)
            tmp = (n if n.startswith(b'.') else b'.' + n) + b'.'
            if b'/' + b'/'.join(segs + [k[1], tmp[:100]]) in line:
                return True
        for p in paths:
            i = line.find(b'/' + p)
            while i >= 0:
                end = i + 1 + len(p)
                if end == len(line) or line[end:end + 1] in b':\'" ':
                    return True
                i = line.find(b'/' + p, i + 1)
    return False


def cmd_restored(label, srcdump, gotdump, table, mode, status, errfile):
    """A table restored into an empty mount (dump GOTDUMP) against the original (SRCDUMP). MODE:
    exact    every cell, version, timestamp and value, the delimiter, the families and GC policies; the
             tool exited 0 and printed nothing.
    seconds  the tool carries whole seconds only (GNU tar): what happened is listed; a newest cell may come
             back at its whole second (the contract, fs/CONTRACT.md, "Backups with standard tools":
             other formats round times), with its value, still the
             newest; any other difference (a cell or value gone, a cell that was not there, a column whose
             current value changed) must be reported by the tool, on stderr, naming the file or a directory
             above it: the contract (fs/CONTRACT.md) "never loses data silently".
    noname   the tool does not carry user.cellfs.name (tar without --xattrs): it fails on every file named in
             short form, naming it, and restores nothing of it; rows below a directory named in short form
             come back under the bytes of that short form; every other cell is exact."""
    tname = os.fsencode(table)
    want_t, want = table_cells(srcdump, tname)
    got_t, got = table_cells(gotdump, tname)
    rc = int(status)
    with open(errfile, 'rb') as f:
        errl = f.read().splitlines()
    shown = [x.decode('utf-8', 'backslashreplace')[:300] for x in errl]
    check_schema(label, want_t, got_t)
    missing = [k for k in want if k not in got]
    wrong = [k for k in want if k in got and got[k] != want[k]]
    extra = [k for k in got if k not in want]
    if mode in ('exact', 'noname'):
        if mode == 'noname':
            d = bytes([want_t.delim])
            isshort = lambda k: b'%~' in encode(k[2], qual=True) or b'%~' in version_name(k[2], k[3])
            short = [k for k in want if isshort(k)]
            if rc == 0 or not errl:
                fail('%s: the tool exited %d, printing %d lines, although %d files have short-form names' % (
                    label, rc, len(errl), len(short)))
            # a row below a directory named in short form: under the bytes of that name
            lit = lambda row: d.join(e if b'%~' in e else s for s, e in (
                (s, encode(s, families=want_t.families)) for s in row.split(d)))
            want = {(lit(k[0]),) + k[1:]: v for k, v in want.items() if k not in short}
            missing = [k for k in want if k not in got]
            wrong = [k for k in want if k in got and got[k] != want[k]]
            extra = [k for k in got if k not in want]
            unreported = [k for k in short if not reported(want_t, k, errl)]
            if unreported:
                fail('%s: %d files with short-form names not restored, without an error naming them: %s' % (
                    label, len(unreported), cell_str(*unreported[0])))
        elif rc != 0 or errl:
            fail('%s: the tool exited %d, printing %d lines:\n    %s' % (label, rc, len(errl),
                                                                        '\n    '.join(shown[:12])))
        msgs = []  # the differences no error names first
        for what, ks in (('missing', missing), ('wrong value', wrong), ('extra cell', extra)):
            for k in ks:
                rep = reported(want_t, k, errl)
                msgs.append((rep, '%s: %s%s %s' % (label, what, '' if rep else ' (NOT REPORTED by the tool)',
                                                  cell_str(*k))))
        silent = sum(not rep for rep, _ in msgs)
        for _, m in sorted(msgs, key=lambda x: x[0]):
            fail(m)
        print('%s: %d cells compared, %d missing, %d with a wrong value, %d extra (%d of these with no error from '
              'the tool naming them); tool exit %d, %d lines on stderr' % (
                  label, len(want), len(missing), len(wrong), len(extra), silent, rc, len(errl)))
        for line in shown[:6] if mode == 'noname' else []:
            print('  tool: %s' % line)
        done(label)
        return
    # seconds
    sec = lambda ts: ts // 1000000 * 1000000
    wnew, gnew = newest_of(want), newest_of(got)
    exact = [k for k in want if got.get(k) == want[k]]
    rounded, lost = [], []
    for k in want:
        if got.get(k) == want[k]:
            continue
        col = k[:3]
        if k[3] == wnew[col] and got.get(col + (sec(k[3]),)) == want[k]:
            rounded.append(k)
        else:
            lost.append(k)
    explained = set(exact) | {k[:3] + (sec(k[3]),) for k in rounded}
    extra = [k for k in got if k not in explained]
    vwant = {c: want[c + (ts,)] for c, ts in wnew.items()}
    vgot = {c: got[c + (ts,)] for c, ts in gnew.items()}
    changed = [c for c in vwant if c in vgot and vgot[c] != vwant[c]]
    versions = [k for k in want if k[3] != wnew[k[:3]]]
    print('%s: %d cells (%d newest, %d older versions): %d exact (%d older versions); %d newest re-stamped to '
          'their whole second; %d gone or overwritten; %d not in the original; %d columns whose newest value '
          '(the bare name) is another; tool exit %d, %d lines on stderr' % (
              label, len(want), len(want) - len(versions), len(versions), len(exact),
              len([k for k in exact if k in versions]), len(rounded), len(lost), len(extra), len(changed), rc,
              len(errl)))
    silent = []
    for what, ks in (('gone or overwritten', lost), ('not in the original', extra),
                     ('another newest value', [c + (wnew[c],) for c in changed])):
        rep = [k for k in ks if reported(want_t, k, errl)]
        sil = [k for k in ks if k not in rep]
        silent += [(what, k) for k in sil]
        for k in sil[:12]:
            extra_info = ''
            if what == 'another newest value':
                extra_info = ' (now @%d, a value written @%d)' % (gnew[k[:3]], k[3])
            elif what == 'gone or overwritten' and k[:3] + (sec(k[3]),) in got:
                extra_info = ' (its whole second @%d holds another value)' % sec(k[3])
            print('  %s, not reported: %s%s' % (what, cell_str(*k), extra_info))
        if len(sil) > 12:
            print('  ... and %d more %s, not reported' % (len(sil) - 12, what))
        if rep:
            print('  %s, reported by the tool: %d cells, e.g. %s' % (what, len(rep), cell_str(*rep[0])))
    for k in rounded[:3]:
        print('  e.g. re-stamped: %s -> @%d' % (cell_str(*k), sec(k[3])))
    for line in shown[:5]:
        print('  tool: %s' % line)
    if silent:
        fail('%s: %d differences beyond the rounding of newest timestamps to seconds that the tool did not '
             'report (the mount never reported them): data changed silently' % (label, len(silent)))
    done(label)


def cmd_copy(dumpdir, table, kind, path):
    """A backup on local disk (KIND dir: a directory made by cp -a or rsync -a; pax or gnu: a tar archive)
    against the listing the mount must have shown for TABLE: every name, type, size, contents, mtime (to
    the ns; to the second for gnu), and nothing else."""
    import tarfile
    tables = load_dump(dumpdir)
    tname = os.fsencode(table)
    ents, _ = expected({tname: tables[tname]})
    vals = Values(dumpdir)
    want = {p[1:]: e for p, e in ents.items() if len(p) >= 1 and p[0] == tname}
    got = {}  # path tuple -> (isdir, size, mtime_ns, sha)
    if kind == 'dir':
        base = os.fsencode(path)
        for dirpath, dirnames, filenames in os.walk(base):
            rel = tuple(x for x in os.path.relpath(dirpath, base).split(b'/') if x != b'.')
            got[rel] = (True, 0, 0, None)
            for fn in filenames:
                p = os.path.join(dirpath, fn)
                st = os.lstat(p)
                with open(p, 'rb') as f:
                    sha = hashlib.sha256(f.read()).hexdigest()
                got[rel + (fn,)] = (S.S_ISDIR(st.st_mode), st.st_size, st.st_mtime_ns, sha)
    else:
        with tarfile.open(path, encoding='utf-8', errors='surrogateescape') as tf:
            for m in tf:
                rel = tuple(os.fsencode(x) for x in m.name.split('/') if x not in ('.', ''))
                if m.isdir():
                    got[rel] = (True, 0, 0, None)
                    continue
                sha = hashlib.sha256(tf.extractfile(m).read()).hexdigest() if m.isfile() else None
                mt = m.pax_headers.get('mtime') if kind == 'pax' else None
                ns = (ts_ns(mt.encode()) if mt is not None else int(m.mtime) * 10**9)
                got[rel] = (m.isdir(), m.size, ns, sha)
    for p, e in want.items():
        g = got.get(p)
        if g is None:
            fail('%s %s: no %s' % (kind, table, show(p)))
            continue
        if g[0] != e.dir:
            fail('%s %s: %s is %s' % (kind, table, show(p), 'a directory' if g[0] else 'a file'))
            continue
        if e.dir:
            continue
        mt = e.mtime * 1000 if kind != 'gnu' else e.mtime // 1000000 * 10**9
        if g[1] != e.size or g[2] != mt or g[3] != vals.sha(e.val):
            fail('%s %s: %s: size %d mtime %d sha %s, want %d %d %s' % (
                kind, table, show(p), g[1], g[2], (g[3] or '')[:12], e.size, mt, vals.sha(e.val)[:12]))
    for p in got:
        if p not in want:
            fail('%s %s: %s is not in the mount' % (kind, table, show(p)))
    print('copy %s %s: %d entries compared' % (kind, table, len(want)))
    done('copy %s %s' % (kind, table))


# ---- the daemon killed while files are written -----------------------------------------------------------

def cmd_crashload(tabledir, rnd, log, n='20000'):
    """Write files under TABLEDIR as a shell loop of `mkdir -p T/rR_I/cf && echo V > T/rR_I/cf/q` would,
    but checking close(): row rR_I (I = 0..N-1), column cf:q, value "R.I\\n"; every 7th also a second
    version of an earlier row's cf:q ("R.J.v2\\n"), every 250th a 1 MiB cf:big. LOG gets "start PATH VALUE-HEX"
    before each write and "done PATH VALUE-HEX" once close() has returned (flushed each time; LOG is on
    local disk). Stops at the first error (the daemon is killed under it): exit 1 then, 0 if all were done."""
    rnd = int(rnd)
    f = open(log, 'a')

    def put(rel, val):
        f.write('start %s %s\n' % (rel, crash_token(val)))
        f.flush()
        d = os.path.join(tabledir, os.path.dirname(rel))
        os.makedirs(d, exist_ok=True)
        fd = os.open(os.path.join(tabledir, rel), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, val)
        finally:
            os.close(fd)
        f.write('done %s %s\n' % (rel, crash_token(val)))
        f.flush()

    try:
        for i in range(int(n)):
            put('r%d_%d/cf/q' % (rnd, i), b'%d.%d\n' % (rnd, i))
            if i % 7 == 6:
                put('r%d_%d/cf/q' % (rnd, i // 2), b'%d.%d.v2\n' % (rnd, i // 2))
            if i % 250 == 249:
                put('r%d_%d/cf/big' % (rnd, i), (b'%d.%d ' % (rnd, i)) * (1 << 17))
    except OSError as e:
        print('crashload: stopped at %s' % e, file=sys.stderr)
        sys.exit(1)


def crash_token(val):
    """How crashload logs VAL and cmd_crash compares it: its hex, or over 4 KiB its SHA-256 (the 1 MiB
    values in hex made the log hundreds of MB to parse after every round)."""
    return val.hex() if len(val) <= 4096 else 'sha256=' + hashlib.sha256(val).hexdigest()


def cmd_crash(dumpdir, mnt, table, log, rnd=None):
    """After the daemon was killed and the store remounted: every write whose close() returned (LOG, from
    crashload) is a cell with its value; each column's newest cell is its last such write (or a write that
    was under way when the daemon died); no cell holds a value never written; the mount shows the same
    (with ROUND: the rows of that round only, rR_*, so that many rounds stay linear)."""
    tname = os.fsencode(table)
    t = load_dump(dumpdir).get(tname)
    vals = Values(dumpdir)
    cols = {}  # (row, qualifier) -> [(ts, value)], newest first
    for row, cs in (t.rows.items() if t else []):
        for (fam, q, ts, n, off) in cs:
            if fam != b'cf':
                fail('%s: a cell in family %s' % (show((row,)), fam.decode()))
            cols.setdefault((row, q), []).append((ts, crash_token(vals.get((off, n)))))
    writes = {}  # (row, qualifier) -> [(value, done)] in the order written
    started, ndone = set(), 0
    with open(log) as f:
        for line in f:
            kind, rel, hx = line.split()
            row, fam, q = rel.split('/')
            k = (row.encode(), q.encode())
            v = hx
            if kind == 'start':
                writes.setdefault(k, []).append([v, False])
                started.add(v)
            else:
                writes[k][-1][1] = True
                ndone += 1
    missing = 0
    for k, ws in writes.items():
        have = cols.get(k, [])
        hv = [v for _, v in have]
        for v, isdone in ws:
            if isdone and v not in hv:
                missing += 1
                fail('%s/cf/%s: the write of %r returned from close() but is not in the store (cells: %r)' % (
                    k[0].decode(), k[1].decode(), v[:40], [x[:20] for x in hv][:5]))
        last_done = max((i for i, (_, d) in enumerate(ws) if d), default=-1)
        ok_newest = {v for v, _ in ws[max(last_done, 0):]}
        if have and have[0][1] not in ok_newest:
            fail('%s/cf/%s: newest value %r, want the last write %r' % (
                k[0].decode(), k[1].decode(), have[0][1][:40], ws[last_done][0][:40]))
    for k, have in cols.items():
        for ts, v in have:
            if v not in started:
                fail('%s/cf/%s @%d: a value never written: %r' % (k[0].decode(), k[1].decode(), ts, v[:40]))
    # the same through the mount
    nread = 0
    for (row, q), have in cols.items():
        if rnd is not None and not row.startswith(b'r%s_' % rnd.encode()):
            continue
        p = os.path.join(os.fsencode(mnt), tname, row, b'cf', encode(q, qual=True))
        try:
            with open(p, 'rb') as f:
                got = f.read()
        except OSError as e:
            fail('%s: %s' % (p.decode(), e))
            continue
        nread += 1
        if crash_token(got) != have[0][1]:
            fail('%s: reads %r, the store has %r' % (p.decode(), got[:40], have[0][1][:40]))
    inflight = sum(1 for ws in writes.values() for _, d in ws if not d)
    print('crash: %d writes done, %d under way when the daemon died (%d of those in the store); %d columns, '
          '%d cells in the store; %d files read through the mount' % (
              ndone, inflight, sum(1 for k, ws in writes.items() for v, d in ws
                                   if not d and v in [x for _, x in cols.get(k, [])]),
              len(cols), sum(map(len, cols.values())), nread))
    done('crash')


# ---- 100k rows ---------------------------------------------------------------------------------------------

def rss_kib(pid, what='VmRSS'):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith(what + ':'):
                return int(line.split()[1])
    return -1


def stats(mnt):
    v = os.getxattr(mnt, 'user.cellfs.stats')
    return {k: int(n) for k, n in (line.split() for line in v.decode().splitlines())}


def cmd_bigdir(dumpdir, mnt, pid, db):
    pid = int(pid)
    tables = load_dump(dumpdir)
    ents, _ = expected(tables)
    big = os.path.join(mnt, 'big', 'big')
    want = ents[(b'big', b'big')].children
    rss0 = rss_kib(pid)
    anon0, inodes0 = rss_kib(pid, 'RssAnon'), stats(mnt)['inodes']

    # Three listings at once of the uncached directory (each must see every entry once), then one more.
    t0 = time.monotonic()
    procs = [subprocess.Popen(['ls', '-f'], cwd=big, stdout=subprocess.PIPE) for _ in range(3)]
    for pr in procs:
        got = pr.communicate()[0].split(b'\n')[:-1]
        if pr.returncode or sorted(got) != sorted([b'.', b'..'] + want):
            fail('ls -f of big/big, three at once: %d names, %d distinct' % (len(got), len(set(got))))
    out = subprocess.run('ls -f | wc -l', shell=True, cwd=big, stdout=subprocess.PIPE, check=True).stdout
    t1 = time.monotonic()
    if int(out) != 100002:
        fail('ls -f | wc -l in big/big: %s, want 100002 (., .. and 100k rows)' % out.strip().decode())
    rss1 = rss_kib(pid)
    anon1, inodes1 = rss_kib(pid, 'RssAnon'), stats(mnt)['inodes']
    with os.scandir(big) as it:
        names = [os.fsencode(e.name) for e in it]
    if len(names) != 100000 or len(set(names)) != 100000:
        fail('scandir big/big: %d entries, %d distinct' % (len(names), len(set(names))))
    if names != want:
        fail('scandir big/big: not the 100k rows in key order')
    t2 = time.monotonic()

    # Every row directory's attributes (from readdirplus: no more requests), and a sample of rows walked
    # to the bottom with their contents.
    fd = os.open(big, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for n in names:
            st, e = os.stat(n, dir_fd=fd, follow_symlinks=False), ents[(b'big', b'big', n)]
            if (st.st_mode, st.st_nlink, st.st_mtime_ns) != (S.S_IFDIR | 0o755, 1, e.mtime * 1000):
                fail('big/big/%s: mode %o nlink %d mtime %d' % (n.decode(), st.st_mode, st.st_nlink, st.st_mtime_ns))
        # Resuming at an offset mid-listing (the kernel's seekdir): offsets are entry numbers, ., .. first.
        for k in (1, 2, 3, 50002, 99999, 100001):
            os.lseek(fd, k, os.SEEK_SET)
            with os.scandir(fd) as it:
                rest = [os.fsencode(e.name) for e in it]
            if rest != want[max(k - 2, 0):]:
                fail('big/big from offset %d: %d entries, want %d' % (k, len(rest), len(want) - k + 2))
    finally:
        os.close(fd)
    for i in range(0, 100000, 997):
        p = (b'big', b'big', b'%06d' % i)
        for q in (p, p + (b'f',), p + (b'f', b'v')):
            st, e = os.stat(mount_path(mnt, q)), ents[q]
            if (st.st_size, st.st_mtime_ns, st.st_nlink) != (e.size, e.mtime * 1000, e.nlink):
                fail('%s: size %d mtime %d nlink %d' % (show(q), st.st_size, st.st_mtime_ns, st.st_nlink))
        if os.listdir(mount_path(mnt, p)) != [b'f'] or os.listdir(mount_path(mnt, p + (b'f',))) != [b'v']:
            fail('%s: wrong listing' % show(p))
        if cat(mount_path(mnt, p + (b'f', b'v'))) != b'%d' % i:
            fail('%s/f/v: wrong contents' % show(p))
    t3 = time.monotonic()

    # A row's wide families, listed in pieces: every column and version once, in the store's order, also
    # from an offset (counted from the family's first cell) and with versions a GC policy hides.
    for fam in (b'f', b'g'):
        p = (b'wide', b'w', fam)
        want = ents[p].children
        got = [os.fsencode(n) for n in os.listdir(mount_path(mnt, p))]
        if got != want:
            fail('%s: %d entries, want %d (first difference at %d)' % (
                show(p), len(got), len(want), next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                                                    min(len(got), len(want)))))
        fd = os.open(mount_path(mnt, p), os.O_RDONLY | os.O_DIRECTORY)
        try:
            for k in (2, 3, 1025, 1026, 2049, len(want) + 1):
                os.lseek(fd, k, os.SEEK_SET)
                with os.scandir(fd) as it:
                    rest = [os.fsencode(e.name) for e in it]
                if rest != want[k - 2:]:
                    fail('%s from offset %d: %d entries, want %d' % (show(p), k, len(rest), len(want) - k + 2))
        finally:
            os.close(fd)

    # A prefix whose 100k rows share three next segments: a few seeks, not 100k rows.
    s0 = stats(mnt)
    t4 = time.monotonic()
    pre = os.listdir(os.path.join(mnt, 'few', 'pre'))
    t5 = time.monotonic()
    s1 = stats(mnt)
    if pre != ['a', 'b', 'c']:
        fail('few/pre lists %r, want a, b, c' % pre[:10])
    nplus = s1['readdirplus'] - s0['readdirplus'] + s1['readdir'] - s0['readdir']
    if nplus > 4:
        fail('listing few/pre took %d readdir(plus) requests' % nplus)
    # The same on a directory the kernel has not cached: the daemon itself resumes at the offset.
    c = (b'few', b'pre', b'c')
    fd = os.open(mount_path(mnt, c), os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.lseek(fd, 20002, os.SEEK_SET)
        with os.scandir(fd) as it:
            rest = [os.fsencode(e.name) for e in it]
        if rest != ents[c].children[20000:]:
            fail('few/pre/c from offset 20002: %d entries, want %d' % (len(rest), len(ents[c].children) - 20000))
    finally:
        os.close(fd)
    # The store changes in the middle of a listing: every row it did not touch comes once, the deleted
    # one and the new one at most once; then the listing is the new one.
    b = (b'few', b'pre', b'b')
    seen = []
    with os.scandir(mount_path(mnt, b)) as it:
        for e in it:
            seen.append(e.name)
            if len(seen) == 5000:
                cellctl(db, 'deleterow', 'few', 'pre#b#099997')
                cellctl(db, 'set', 'few', 'pre#b#099998x', 'f:v=new')
    old, new = ents[b].children, ents[b].children[:-1] + [b'099998x']
    if old[-1] != b'099997':
        fail('few/pre/b: the expected listing does not end with 099997')
    counts = {}
    for n in seen:
        counts[n] = counts.get(n, 0) + 1
    if any(counts.get(n) != 1 for n in old[:-1]) or counts.get(b'099997', 0) > 1 or \
            counts.get(b'099998x', 0) > 1 or len(counts) > len(old) + 1:
        fail('few/pre/b changed mid-listing: %d names, %d distinct, %d of %d unchanged rows once' % (
            len(seen), len(counts), sum(counts.get(n) == 1 for n in old[:-1]), len(old) - 1))
    until('few/pre/b after the change', lambda: [os.fsencode(n) for n in os.listdir(mount_path(mnt, b))] == new)
    ents[b].children = new
    for seg in (b'a', b'b', b'c'):
        p = (b'few', b'pre', seg)
        if [os.fsencode(n) for n in os.listdir(mount_path(mnt, p))] != ents[p].children:
            fail('%s: not the rows of the store, in key order' % show(p))
    t6 = time.monotonic()
    rss2 = rss_kib(pid)
    print('bigdir: ls -f of 100k entries (3 at once, then | wc -l) %.2fs, scandir %.2fs, attributes, offsets and a sample %.1fs; '
          'few/pre (3 segments of 100k rows) %.3fs with %d readdir(plus) requests, then 3 x 33k rows %.1fs' % (
              t1 - t0, t2 - t1, t3 - t2, t5 - t4, nplus, t6 - t5))
    print('bigdir: daemon VmRSS %d KiB before, %d KiB after listing 100k, %d KiB at the end' % (rss0, rss1, rss2))
    # Readdirplus hands the kernel a node per entry, which the daemon keeps while the kernel does; beyond
    # that, listing must not hold the rows: 1 KiB a node is generous (4 under AddressSanitizer).
    with open('/proc/%d/maps' % pid) as f:
        factor = 4 if 'libasan' in f.read() else 1
    if rss1 - rss0 > 100000 * factor:
        fail('listing 100k entries grew the daemon by %d KiB' % (rss1 - rss0))
    # The daemon's own memory for each inode the kernel took (about 80 bytes; the old tables took 350).
    per = (anon1 - anon0) * 1024 / max(inodes1 - inodes0, 1)
    print('bigdir: %d inodes more, %d bytes of the daemon\'s own memory each' % (inodes1 - inodes0, per))
    if inodes1 - inodes0 >= 50000 and per > 200 * factor:
        fail('the daemon took %d bytes for each of %d inodes' % (per, inodes1 - inodes0))
    if rss2 > 300 * 1024 * factor:
        fail('the daemon holds %d KiB at the end' % rss2)
    done('bigdir')


# ---- against cellctl ---------------------------------------------------------------------------------------

def cellctl(db, *args, env=None, check=True):
    r = subprocess.run([os.environ['CELLCTL'], '--db', db] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env)
    if check and (r.returncode or r.stderr):
        fail('cellctl %s: exit %d, stderr %r' % (' '.join(args), r.returncode, r.stderr))
    return r.stdout


def go_unquote(s):
    """Undo Go's %q (cbt's value format)."""
    assert s[:1] == b'"' and s[-1:] == b'"', s
    s, out, i = s[1:-1], bytearray(), 0
    simple = {ord('a'): 7, ord('b'): 8, ord('f'): 12, ord('n'): 10, ord('r'): 13, ord('t'): 9, ord('v'): 11,
              ord('\\'): 92, ord('"'): 34, ord("'"): 39}
    while i < len(s):
        if s[i] != 0x5C:
            out.append(s[i])
            i += 1
            continue
        c = s[i + 1]
        if c in simple:
            out.append(simple[c])
            i += 2
        elif c == ord('x'):
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        elif c in (ord('u'), ord('U')):
            n = 4 if c == ord('u') else 8
            out += chr(int(s[i + 2:i + 2 + n], 16)).encode()
            i += 2 + n
        else:
            raise ValueError(s)
    return bytes(out)


CBT_TIME = re.compile(rb'@ (\d{4})/(\d\d)/(\d\d)-(\d\d):(\d\d):(\d\d)\.(\d{6})\Z')


def parse_cbt(out):
    """cbt's read/lookup output -> [(row, [(family, qualifier, ts µs, value)])] (TZ=UTC)."""
    import calendar
    rows = []
    for block in out.split(b'-' * 40 + b'\n'):
        lines = block.split(b'\n')
        if not lines[0]:
            continue
        cells, i = [], 1
        while i < len(lines) and lines[i].startswith(b'  '):
            col, _, when = lines[i][2:].rpartition(b' @ ')  # COLUMN padded to 40 runes, then @ TIME
            col = col.rstrip(b' ')  # (so no qualifier here ends in a space)
            m = CBT_TIME.match(b'@ ' + when)
            fam, _, q = col.partition(b':')
            y, mo, d, h, mi, s, us = (int(x) for x in m.groups())
            ts = calendar.timegm((y, mo, d, h, mi, s)) * 10**6 + us
            cells.append((fam, q, ts, go_unquote(lines[i + 1].strip())))
            i += 2
        rows.append((lines[0], cells))
    return rows


def cmd_cellctl(mnt, db, table):
    env = dict(os.environ, TZ='UTC')
    tb = table.encode()
    schema = cellctl(db, 'ls', table, env=env)
    fams = [line.split(b'\t')[0] for line in schema.split(b'\n')[2:] if line]
    out = cellctl(db, 'read', table, env=env)
    rows = parse_cbt(out)
    if not rows:
        fail('cellctl read %s printed no rows' % table)
    delim = os.getxattr(os.path.join(mnt, table), 'user.cellfs.delimiter')
    xfams = sorted(a[len('user.cellfs.family.'):].encode() for a in os.listxattr(os.path.join(mnt, table))
                   if a.startswith('user.cellfs.family.'))
    if xfams != sorted(fams):
        fail('families: getfattr says %r, cellctl ls %r' % (xfams, fams))
    nrows = 0
    for row, cells in rows:
        nrows += 1
        rp = (tb,) + tuple(encode(s, families=fams) for s in row.split(delim))
        # cellctl lookup of the row prints the same as its part of read
        lk = parse_cbt(cellctl(db, 'lookup', table, row.decode(), env=env))
        if lk != [(row, cells)]:
            fail('lookup %s differs from read' % row.decode())
        byfam = {}
        for fam, q, ts, v in cells:
            byfam.setdefault(fam, []).append((q, ts, v))
        listed = [n for n in os.listdir(mount_path(mnt, rp)) if n in fams]
        if listed != sorted(byfam):
            fail('%s: families %r, cellctl shows %r' % (show(rp), listed, sorted(byfam)))
        for fam, cl in byfam.items():
            fp = rp + (fam,)
            names, prevq = [], None
            for q, ts, v in cl:
                name = encode(q, qual=True) if q != prevq else version_name(q, ts)
                prevq = q
                names.append(name)
                path = mount_path(mnt, fp + (name,))
                try:
                    st = os.stat(path)
                    with open(path, 'rb') as f:
                        data = f.read()
                except OSError as e:
                    fail('%s: %s (cellctl shows it)' % (show(fp + (name,)), e))
                    continue
                if data != v or st.st_size != len(v) or st.st_mtime_ns != ts * 1000:
                    fail('%s: %r size %d mtime %d; cellctl: %r @ %d' % (show(fp + (name,)), data[:40], st.st_size,
                                                                      st.st_mtime_ns, v[:40], ts))
            got = sorted(os.fsencode(n) for n in os.listdir(mount_path(mnt, fp)))
            if got != sorted(names):
                fail('%s lists %r, cellctl shows %r' % (show(fp), got, sorted(names)))
    count = cellctl(db, 'count', table, env=env).strip()
    if int(count) != nrows:
        fail('cellctl count %s: %s, read printed %d rows' % (table, count.decode(), nrows))
    find = subprocess.run(['find', os.path.join(mnt, table), '-type', 'f'], stdout=subprocess.PIPE).stdout
    ncells = sum(len(c) for _, c in rows)
    if find.count(b'\n') != ncells:
        fail('find -type f: %d files, cellctl read shows %d cells' % (find.count(b'\n'), ncells))
    print('cellctl: %d rows, %d cells compared' % (nrows, ncells))
    done('cellctl')


def cmd_asof(root, db, table, when, us, kind='mount'):
    """An as-of view (cellfs -o asof=WHEN, or a copy of one: KIND copy) of TABLE at US µs, three ways: the
    store's present cells (`cellctl read`, no asof) kept to those at or before US must be what `cellctl read
    asof=WHEN` prints, row for row (and lookup, count); and ROOT/TABLE must hold exactly those as files
    (names, contents, sizes, mtimes), with exactly the directories they imply (a row or family whose cells are
    all newer is not there). On a mount: what is newer is ENOENT by name too (Q@TS, bare names, directories),
    no directory is dated after US, and the family attributes are cellctl ls's."""
    env = dict(os.environ, TZ='UTC')
    us = int(us)
    tb = table.encode()
    schema = cellctl(db, 'ls', table, env=env)
    fams = [line.split(b'\t')[0] for line in schema.split(b'\n')[2:] if line]
    present = parse_cbt(cellctl(db, 'read', table, env=env))
    want = [(r, [c for c in cells if c[2] <= us]) for r, cells in present]
    want = [(r, cells) for r, cells in want if cells]
    got = parse_cbt(cellctl(db, 'read', table, 'asof=' + when, env=env))
    if got != want:
        fail('read %s asof=%s: %r; the present cells at or before %d: %r' % (table, when, got[:5], us, want[:5]))
    count = cellctl(db, 'count', table, 'asof=' + when, env=env).strip()
    if count != b'%d' % len(want):
        fail('count %s asof=%s: %s, want %d' % (table, when, count.decode(), len(want)))
    delim = b'#'
    if kind == 'mount':
        delim = os.getxattr(os.path.join(root, table), 'user.cellfs.delimiter')
        xfams = sorted(a[len('user.cellfs.family.'):].encode() for a in os.listxattr(os.path.join(root, table))
                       if a.startswith('user.cellfs.family.'))
        if xfams != sorted(fams):
            fail('families: getfattr says %r, cellctl ls %r' % (xfams, fams))

    def implied(rows):
        """The directories and files (paths below the table) that ROWS' cells make, files -> (value, ts)."""
        dirs, files = set(), {}
        for r, cells in rows:
            rp = tuple(encode(x, families=fams) for x in r.split(delim))
            for i in range(1, len(rp) + 1):
                dirs.add(rp[:i])
            prevq = None
            for fam, q, ts, v in cells:
                dirs.add(rp + (fam,))
                name = encode(q, qual=True) if (fam, q) != prevq else version_name(q, ts)
                prevq = (fam, q)
                files[rp + (fam, name)] = (v, ts)
        return dirs, files

    for r, cells in want:
        lk = parse_cbt(cellctl(db, 'lookup', table, r.decode(), 'asof=' + when, env=env))
        if lk != [(r, cells)]:
            fail('lookup %s asof=%s: %r, read shows %r' % (r.decode(), when, lk, cells))
    wdirs, wfiles = implied(want)
    top = os.path.join(os.fsencode(root), tb)
    gdirs, gfiles = set(), set()
    for dp, dn, fn in os.walk(top):
        rel = tuple(x for x in dp[len(top):].split(b'/') if x)
        gdirs.update(rel + (d,) for d in dn)
        gfiles.update(rel + (f,) for f in fn)
        if kind == 'mount' and os.stat(dp).st_mtime_ns > us * 1000:
            fail('%s: a directory dated %d ns, after the view\'s time' % (show((tb,) + rel), os.stat(dp).st_mtime_ns))
    for d in sorted(gdirs ^ wdirs):
        fail('%s: %s' % (show((tb,) + d), 'a directory of no cell at or before the time' if d in gdirs
                         else 'missing (cellctl read asof= shows cells under it)'))
    for f in sorted(gfiles ^ set(wfiles)):
        fail('%s: %s' % (show((tb,) + f), 'a file of no such cell' if f in gfiles else 'missing'))
    for f, (v, ts) in sorted(wfiles.items()):
        if f not in gfiles:
            continue
        path = mount_path(root, (tb,) + f)
        st = os.stat(path)
        with open(path, 'rb') as fh:
            data = fh.read()
        if data != v or st.st_size != len(v) or st.st_mtime_ns != ts * 1000:
            fail('%s: %r size %d mtime %d; cellctl: %r @ %d' % (show((tb,) + f), data[:40], st.st_size,
                                                              st.st_mtime_ns, v[:40], ts))
    newer = 0
    if kind == 'mount':
        pdirs, _ = implied(present)
        names = set()
        for r, cells in present:
            rp = tuple(encode(x, families=fams) for x in r.split(delim))
            cols = {}
            for fam, q, ts, v in cells:  # (newest first)
                cols.setdefault((fam, q), []).append(ts)
            for (fam, q), tss in cols.items():
                names.update(rp + (fam, version_name(q, ts)) for ts in tss if ts > us)
                then = [ts for ts in tss if ts <= us]
                if not then:
                    names.add(rp + (fam, encode(q, qual=True)))
                    continue
                vp = (tb,) + rp + (fam, version_name(q, then[0]))
                try:  # the view's newest cell of the column: also reachable by its Q@TS name, unlisted
                    os.stat(mount_path(root, vp))
                except OSError as e:
                    fail('%s: %s (the newest cell at the time, by its version name)' % (show(vp), e))
        for p in sorted(names | (pdirs - wdirs)):
            try:
                os.stat(mount_path(root, (tb,) + p))
                fail('%s: newer than the view, yet there' % show((tb,) + p))
            except OSError as e:
                if e.errno != errno.ENOENT:
                    fail('%s: %s, want ENOENT' % (show((tb,) + p), e))
            newer += 1
    print('asof %s: %d rows, %d cells, %d directories, %d newer names ENOENT' % (
        when, len(want), len(wfiles), len(wdirs), newer))
    done('asof')


# ---- following the store -------------------------------------------------------------------------------------

DEADLINE = float(os.environ.get('FOLLOW_DEADLINE', '30'))  # generous: a loaded machine
latencies = []


def until(what, cond):
    """Poll COND until it holds; fail if that takes over DEADLINE seconds."""
    t0 = time.monotonic()
    while True:
        try:
            ok = cond()
        except OSError:
            ok = False
        dt = time.monotonic() - t0
        if ok:
            latencies.append((what, dt))
            return True
        if dt > DEADLINE:
            fail('after %.1fs the mount still does not show: %s' % (dt, what))
            return False
        time.sleep(0.01)


def cat(p):
    with open(p, 'rb') as f:
        return f.read()


def gone(p):
    try:
        os.lstat(p)
    except FileNotFoundError:
        return True
    return False


def cmd_follow(mnt, db):
    j = os.path.join
    live = j(mnt, 'live')
    # Fill every cache: listings, attributes, contents, negative entries.
    for d in (mnt, live, j(live, 'r1'), j(live, 'r1', 'cf'), j(live, 'r2'), j(live, 'r2', 'x')):
        os.listdir(d)
    a = j(live, 'r1', 'cf', 'a')
    st0 = os.stat(a)
    if cat(a) != b'one':
        fail('r1/cf/a before: %r' % cat(a))
    for p in (j(live, 'r3'), j(live, 'r1', 'cf', 'c'), j(mnt, 'new'), j(live, 'r1', 'meta')):
        if not gone(p):
            fail('%s exists before it is written' % p)

    # A value of the same length: only the mtime tells. A handle opened before the change reads its own
    # value; its pages must not be served to later opens as the new value.
    cf = j(live, 'r1', 'cf')
    cf0 = os.stat(cf).st_mtime_ns
    held = os.open(a, os.O_RDONLY)
    cellctl(db, 'set', 'live', 'r1', 'cf:a=two')
    old = 'a@%016d' % (st0.st_mtime_ns // 1000)
    # The family directory's cached mtime (its newest cell's) changes only when the daemon's watcher has
    # told the kernel to drop what it holds, r1/cf/a's pages included. (A stat of a file just read asks
    # the daemon at once, for its atime, so it tells nothing.)
    until('the new mtime of r1/cf (stat)', lambda: os.stat(cf).st_mtime_ns != cf0)
    until('the new mtime of r1/cf/a (stat)', lambda: os.stat(a).st_mtime_ns != st0.st_mtime_ns)
    ts2 = os.stat(a).st_mtime_ns // 1000
    if os.read(held, 100) != b'one':
        fail('a handle opened before the change does not read the value it opened')
    until('the new value of r1/cf/a (cat)', lambda: cat(a) == b'two')
    for _ in range(3):
        if cat(a) != b'two':
            fail('r1/cf/a reads %r again: the old handle\'s pages were kept' % cat(a))
    os.close(held)
    if cat(a) != b'two':
        fail('r1/cf/a reads %r after the old handle closed' % cat(a))
    # A larger value read in pieces: a handle opened before a change keeps reading the value it opened
    # even after another reader has read the new one (the page cache is shared by all handles).
    big = j(live, 'r1', 'cf', 'big')
    cellctl(db, 'set', 'live', 'r1', 'cf:big=' + 'A' * 120000)
    until('r1/cf/big (cat)', lambda: cat(big) == b'A' * 120000)
    held = os.open(big, os.O_RDONLY)
    first = os.read(held, 4096)
    big0 = os.stat(big).st_mtime_ns
    cellctl(db, 'set', 'live', 'r1', 'cf:big=' + 'B' * 120000)
    until('the new mtime of r1/cf/big (stat)', lambda: os.stat(big).st_mtime_ns != big0)
    if cat(big) != b'B' * 120000:
        fail('a new reader of r1/cf/big does not read the new value')
    rest = b''
    while True:
        chunk = os.read(held, 4096)
        if not chunk:
            break
        rest += chunk
    os.close(held)
    if first + rest != b'A' * 120000:
        fail('a handle opened before a change read a mix of values: %d bytes, %d of them B'
             % (len(first + rest), (first + rest).count(b'B')))
    if cat(big) != b'B' * 120000:
        fail('r1/cf/big after the old handle closed reads the old value')
    cellctl(db, 'deletecolumn', 'live', 'r1', 'cf', 'big')
    until('r1/cf/big deleted', lambda: gone(big))

    cellctl(db, 'set', 'live', 'r1', 'cf:a=uno-longer')
    until('a longer value of r1/cf/a (cat)', lambda: cat(a) == b'uno-longer')
    until('its new size (stat)', lambda: os.stat(a).st_size == 10)
    until('the old values as a@TS', lambda: os.listdir(j(live, 'r1', 'cf')) == ['a', 'a@%016d' % ts2, old])

    # The same cell rewritten: same timestamp, same size; only the contents differ.
    ts3 = os.stat(a).st_mtime_ns // 1000
    if ts3 % 1000:
        fail('cellctl wrote a timestamp that is not whole milliseconds: %d' % ts3)
    cat(a)
    cellctl(db, 'set', 'live', 'r1', 'cf:a=UNO-LONGER@%d' % ts3)
    until('r1/cf/a rewritten in place (cat)', lambda: cat(a) == b'UNO-LONGER')

    cellctl(db, 'set', 'live', 'r3', 'cf:c=three')
    until('a new row r3 (ls)', lambda: 'r3' in os.listdir(live))
    until('r3/cf/c (cat)', lambda: cat(j(live, 'r3', 'cf', 'c')) == b'three')
    cellctl(db, 'set', 'live', 'r1', 'cf:c=see', 'meta:m=meta')
    until('r1/cf/c after a negative lookup', lambda: cat(j(live, 'r1', 'cf', 'c')) == b'see')
    until('r1/meta, a family directory', lambda: os.listdir(j(live, 'r1')) == ['cf', 'meta'])
    cellctl(db, 'set', 'live', 'r1#sub', 'cf:s=s')
    until('r1/sub, a prefix directory next to families', lambda: os.listdir(j(live, 'r1')) == ['cf', 'meta', 'sub'])

    cellctl(db, 'deletecolumn', 'live', 'r1', 'cf', 'a')
    until('r1/cf/a deleted (stat)', lambda: gone(a))
    until('r1/cf/a and its versions gone from ls', lambda: os.listdir(j(live, 'r1', 'cf')) == ['c'])
    os.listdir(j(live, 'r2', 'x', 'cf'))
    cellctl(db, 'deleterow', 'live', 'r2#x')
    until('row r2#x deleted: r2 gone (ls)', lambda: 'r2' not in os.listdir(live))
    until('row r2#x deleted: r2/x/cf/b gone (stat)', lambda: gone(j(live, 'r2', 'x', 'cf', 'b')))

    cellctl(db, 'createtable', 'new')
    until('table new (ls of the root)', lambda: 'new' in os.listdir(mnt))
    until('table new (stat)', lambda: os.path.isdir(j(mnt, 'new')))
    cellctl(db, 'createfamily', 'live', 'fresh:maxversions=2')
    until('family fresh in the schema (getfattr)',
          lambda: os.getxattr(live, 'user.cellfs.family.fresh') == b'maxversions=2')
    cellctl(db, 'set', 'live', 'r1', 'fresh:v=1@1000', 'fresh:v=2@2000', 'fresh:v=3@3000')
    until('two of three versions in r1/fresh (maxversions=2)', lambda: len(os.listdir(j(live, 'r1', 'fresh'))) == 2)
    cellctl(db, 'setgcpolicy', 'live', 'fresh', 'maxversions=1')
    until('setgcpolicy: the policy (getfattr)',
          lambda: os.getxattr(live, 'user.cellfs.family.fresh') == b'maxversions=1')
    until('setgcpolicy: collected versions gone', lambda: os.listdir(j(live, 'r1', 'fresh')) == ['v'])
    cellctl(db, 'deletefamily', 'live', 'meta')
    until('deletefamily: r1/meta gone (ls)', lambda: 'meta' not in os.listdir(j(live, 'r1')))
    until('deletefamily: r1/meta/m gone (stat)', lambda: gone(j(live, 'r1', 'meta', 'm')))
    until('deletefamily: its attribute gone', lambda: 'user.cellfs.family.meta' not in os.listxattr(live))
    cellctl(db, 'deletetable', 'new')
    until('table new deleted (ls)', lambda: 'new' not in os.listdir(mnt))
    until('table new deleted (stat)', lambda: gone(j(mnt, 'new')))
    cellctl(db, 'deleteallrows', 'live')
    until('deleteallrows: the table is empty', lambda: os.listdir(live) == [])
    until('deleteallrows: r3/cf/c gone', lambda: gone(j(live, 'r3', 'cf', 'c')))

    worst = max(latencies, key=lambda x: x[1])
    print('follow: %d changes seen; slowest %.2fs (%s); mean %.2fs' % (
        len(latencies), worst[1], worst[0], sum(x[1] for x in latencies) / len(latencies)))
    done('follow')


def main():
    cmds = {'tree': cmd_tree, 'remount': cmd_remount, 'bigdir': cmd_bigdir, 'cellctl': cmd_cellctl, 'asof': cmd_asof,
            'follow': cmd_follow, 'restored': cmd_restored, 'copy': cmd_copy,
            'crashload': cmd_crashload, 'crash': cmd_crash}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == '__main__':
    main()
