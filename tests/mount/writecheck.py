#!/usr/bin/env python3
"""writecheck.py — writing through a cellfs mount: each check names a behaviour of the contract's sections (fs/CONTRACT.md,
"Writing"; "Removing", "Renames", "Bad input", "Durability and sharing"; and of fs/README.md), does it through the mount (system calls
or the shell tools people use), and checks the store with dump_store, not through the mount: the exact
cells added, removed or changed. Every refused operation is checked twice: its errno, and a dump before and
after that must be identical. write.sh mounts and unmounts; these subcommands do the rest:

  seed DB                  the tables the checks start from, written with cellctl before the first mount
  main MNT DB STATE        the read-write mount: handles, Q@TS, times, unlink, mkdir, rmdir, rename, links,
                           names, schema xattrs, what shows at once, shell scripts (loops, >>, here-documents,
                           printf, cp, cp -r, cp -a, rsync, sed -i), 10,000 cells written by a script.
                           Writes STATE: the store and the directories only the daemon held.
  after MNT DB STATE       after a remount: the store is as main left it; the held directories are gone
  ro MNT DB                -o ro: every kind of write is EROFS, the store unchanged
  strict MNT DB            -o strict_schema: files in an unknown family are EPERM; known ones are written
  delim MNT DB             -o delimiter=.: tables made with mkdir split keys on '.'
  crash-check DB           after the daemon was killed (SIGKILL): a closed file is there, an open one is not
  big MNT DB               a key directory of exactly 100,000 cells moves with rename(2); one of 100,001 is
                           EXDEV, the store unchanged

Environment: DUMP_STORE, CELLCTL; WRITECHECK_ONLY="NAME ..." runs only those scenarios of main (by hand:
the checks of after then fail). Exit status 0 (every check passed) or 1 (failures listed on stderr).
"""
import ctypes
import errno
import os
import pickle
import shutil
import stat as S
import subprocess
import sys
import tempfile
import time
import traceback

sys.dont_write_bytecode = True  # (no __pycache__ in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mountcheck import encode, version_name  # noqa: E402  (the name rules, written once)

T0 = 1426535612156000  # the seeds' era, µs (a whole millisecond: cellctl truncates to ms)
MIB = 1 << 20
VALUE_MAX = 100 * MIB  # the store's default value limit

passed = 0
failed = []


def ok(name, cond, detail=''):
    """Record check NAME."""
    global passed
    if cond:
        passed += 1
    else:
        failed.append(name)
        print('FAIL: %s%s' % (name, (': ' + detail) if detail else ''), file=sys.stderr)
    return cond


def done(what):
    print('%s: %d checks passed, %d failed' % (what, passed, len(failed)))
    if failed:
        print('%s: %d FAILED: %s' % (what, len(failed), '; '.join(failed[:40])), file=sys.stderr)
        sys.exit(1)


def ename(e):
    return errno.errorcode.get(e, str(e)) if e else 'success'


def errno_of(fn, *a, **k):
    try:
        fn(*a, **k)
        return 0
    except OSError as e:
        return e.errno


def now_us():
    return time.time_ns() // 1000


# ---- the store, as dump_store prints it -----------------------------------------------------------------

def unhex(s):
    return b'' if s == b'-' else bytes.fromhex(s.decode())


class Snap:
    """One dump: tables {name: (delim, created)}, fams {(table, family): gc}, cells {(table, row, family,
    qualifier, ts): value}; names of tables and families as str, row keys, qualifiers, values as bytes."""

    def __init__(self):
        self.tables, self.fams, self.cells = {}, {}, {}

    def __eq__(self, o):
        return (self.tables, self.fams, self.cells) == (o.tables, o.fams, o.cells)

    def column(self, t, row, fam, q):
        """{ts: value} of one column."""
        return {k[4]: v for k, v in self.cells.items() if k[:4] == (t, row, fam, q)}

    def rows(self, t):
        return sorted({k[1] for k in self.cells if k[0] == t})


DB = None

# dump_store runs from a helper process started before any file is opened for writing: a process forked
# while this one holds a writable descriptor would flush it (close-on-exec closes its copy), and every
# flush writes the handle back, so dumping between two writes of one handle would change what is tested.
DUMPER_CODE = r"""
import subprocess, sys
for line in sys.stdin:
    db, d = line.rstrip('\n').split('\0')
    r = subprocess.run([sys.argv[1], db, d], stderr=subprocess.PIPE)
    sys.stdout.write('ok\n' if r.returncode == 0 else 'dump_store: %r\n' % r.stderr[:500])
    sys.stdout.flush()
"""
dumper = None


def start_dumper():
    global dumper
    dumper = subprocess.Popen([sys.executable, '-c', DUMPER_CODE, os.environ['DUMP_STORE']], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)


def snap(db=None):
    d = tempfile.mkdtemp(prefix='writecheck-dump.')
    try:
        if dumper is None:
            start_dumper()
        dumper.stdin.write(('%s\0%s\n' % (db or DB, d)).encode())
        dumper.stdin.flush()
        r = dumper.stdout.readline()
        if r != b'ok\n':
            raise RuntimeError(r.decode(errors='replace') or 'the dump helper died')
        with open(os.path.join(d, 'values.bin'), 'rb') as f:
            vals = f.read()
        s = Snap()
        with open(os.path.join(d, 'dump.txt'), 'rb') as f:
            for line in f:
                p = line.split()
                if p[0] == b'table':
                    s.tables[p[1].decode()] = (int(p[2], 16), int(p[3]))
                elif p[0] == b'family':
                    s.fams[(p[1].decode(), p[2].decode())] = unhex(p[3])
                elif p[0] == b'cell':
                    off, n = int(p[7]), int(p[6])
                    s.cells[(p[1].decode(), unhex(p[2]), p[3].decode(), unhex(p[4]), int(p[5]))] = vals[off:off + n]
        return s
    finally:
        shutil.rmtree(d)


def delta(b, a):
    """(added, removed, changed) cells from dump B to dump A."""
    added = {k: v for k, v in a.cells.items() if k not in b.cells}
    removed = {k: v for k, v in b.cells.items() if k not in a.cells}
    changed = {k: (b.cells[k], v) for k, v in a.cells.items() if k in b.cells and b.cells[k] != v}
    return added, removed, changed


def short(v, n=60):
    return repr(v if len(v) <= n else v[:n] + b'...') if isinstance(v, bytes) else repr(v)[:200]


def describe(b, a):
    """What differs between two dumps, for a message."""
    added, removed, changed = delta(b, a)
    out = []
    for k, v in list(added.items())[:4]:
        out.append('+%s=%s' % (k[:4] + (k[4],), short(v)))
    for k, v in list(removed.items())[:4]:
        out.append('-%s' % (k,))
    for k, v in list(changed.items())[:4]:
        out.append('~%s: %s -> %s' % (k, short(v[0]), short(v[1])))
    if len(added) + len(removed) + len(changed) > 12:
        out.append('(%d added, %d removed, %d changed)' % (len(added), len(removed), len(changed)))
    if a.tables != b.tables:
        out.append('tables %s -> %s' % (sorted(b.tables), sorted(a.tables)))
    if a.fams != b.fams:
        out.append('families: %s' % sorted(set(a.fams.items()) ^ set(b.fams.items())))
    return '; '.join(out) or 'no difference'


def same(name, b, a):
    return ok(name + ': store unchanged', a == b, describe(b, a))


def expect(name, b, a, added=None, removed=(), changed=None, schema=True):
    """The cells from B to A changed exactly so: ADDED {key: value}, REMOVED [key], CHANGED {key: new value};
    the schema unchanged unless SCHEMA is False."""
    ad, rm, ch = delta(b, a)
    want_ad = added or {}
    want_ch = changed or {}
    good = ad == want_ad and set(rm) == set(removed) and {k: v[1] for k, v in ch.items()} == want_ch
    if schema:
        good = good and a.tables == b.tables and a.fams == b.fams
    return ok(name, good, 'store changed by: %s; wanted %s' % (
        describe(b, a), '; '.join(['+%s=%s' % (k, short(v)) for k, v in list(want_ad.items())[:4]] +
                                   ['-%s' % (k,) for k in list(removed)[:4]] +
                                   ['~%s=%s' % (k, short(v)) for k, v in list(want_ch.items())[:4]])))


def new_cell(name, b, a, t, row, fam, q, value, t0, t1, removed=(), schema=True):
    """Exactly one cell was added to column (T, ROW, FAM, Q), with VALUE, at a timestamp of now (a whole
    millisecond between T0 and T1, µs), and REMOVED went. Returns the timestamp (or None)."""
    ad, rm, ch = delta(b, a)
    ts = None
    if len(ad) == 1:
        k, v = next(iter(ad.items()))
        if k[:4] == (t, row, fam, q) and v == value:
            ts = k[4]
    good = ts is not None and not ch and set(rm) == set(removed)
    if schema:
        good = good and a.tables == b.tables and a.fams == b.fams
    ok(name, good, 'store changed by: %s; wanted one new cell %s=%s%s' % (
        describe(b, a), (t, row, fam, q), short(value), ' and -%s' % list(removed) if removed else ''))
    if ts is not None:
        ok(name + ': timestamp is now, in whole milliseconds', ts % 1000 == 0 and t0 // 1000 * 1000 <= ts <= t1,
           'ts %d, not a whole ms in [%d, %d]' % (ts, t0, t1))
    return ts


# ---- the mount ---------------------------------------------------------------------------------------------

MNT = None


def M(*parts):
    return os.path.join(MNT, *parts)


def sh(script, cwd=None, input=None):
    """Run SCRIPT with bash in the mount: (status, stdout, stderr)."""
    r = subprocess.run(['bash', '-c', script], cwd=cwd or MNT, input=input, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return r.returncode, r.stdout, r.stderr


def sh_ok(name, script, **k):
    rc, out, err = sh(script, **k)
    ok(name + ': exit 0, nothing on stderr', rc == 0 and not err, 'exit %d, stderr %r' % (rc, err[:300]))
    return out


def write(path, data, flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC, dir_fd=None):
    fd = os.open(path, flags, 0o644, dir_fd=dir_fd)
    try:
        if data:
            os.write(fd, data)
    finally:
        os.close(fd)


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def expect_err(name, want, fn, *a, **k):
    """FN(*A) fails with errno WANT (or one of WANT, a tuple) and changes nothing in the store."""
    b = snap()
    e = errno_of(fn, *a, **k)
    a_ = snap()
    wants = want if isinstance(want, tuple) else (want,)
    ok('%s: %s' % (name, '/'.join(ename(w) for w in wants)), e in wants, 'got %s' % ename(e))
    same(name, b, a_)
    return e


def sees(name, path, value, ts=None):
    """The mount shows PATH with VALUE (cat and stat) and, if TS, mtime TS µs."""
    try:
        got = read(path)
        st = os.stat(path)
    except OSError as e:
        return ok(name + ': the mount shows it', False, '%s: %s' % (path, e))
    good = got == value and st.st_size == len(value) and (ts is None or st.st_mtime_ns == ts * 1000)
    return ok(name + ': the mount shows it', good, '%s: read %s, size %d, mtime %d ns; want %s, mtime %s µs' % (
        path, short(got), st.st_size, st.st_mtime_ns, short(value), ts))


def listdir(path):
    try:
        return sorted(os.listdir(path))
    except OSError as e:
        return 'error %s' % ename(e.errno)


libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2


def renameat2(a, b, flags):
    if libc.renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a)


def mknod(path, mode):
    if libc.mknod(os.fsencode(path), mode, 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), path)


def cellctl(*args, db=None):
    r = subprocess.run([os.environ['CELLCTL'], '--db', db or DB] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if r.returncode:
        raise RuntimeError('cellctl %s: %s' % (' '.join(args), r.stderr.decode(errors='replace')))
    return r.stdout


SCENARIOS = []


def scenario(f):
    SCENARIOS.append(f)
    return f


# ---- seed -----------------------------------------------------------------------------------------------

def cmd_seed(db):
    global DB
    DB = db
    cellctl('createtable', 'w', 'families=cf,k1:maxversions=1')
    cells = {
        'h#dup': ['cf:q=old@%d' % T0],
        'h#none': ['cf:q=keep@%d' % T0, 'cf:e=@%d' % T0],
        'h#over': ['cf:q=v1@%d' % T0, 'cf:q=v2@%d' % (T0 + 1000)],
        'h#app': ['cf:q=line1@%d' % T0],
        'h#rw': ['cf:q=hello world@%d' % T0],
        'h#trunc': ['cf:q=0123456789@%d' % T0, 'cf:p=abcdef@%d' % T0, 'cf:z=@%d' % T0],
        'h#big': ['cf:q=small@%d' % T0],
        'h#vis': ['cf:q=first@%d' % T0],
        'v#q': ['cf:q=v1@%d' % T0, 'cf:q=v2@%d' % (T0 + 2000)],
        'tm#r': ['cf:q=one@%d' % T0, 'cf:q=two@%d' % (T0 + 1000), 'cf:n=now@%d' % T0, 'cf:v=ver@%d' % T0],
        'u#r': ['cf:a=a1@%d' % T0, 'cf:a=a2@%d' % (T0 + 1000), 'cf:a=a3@%d' % (T0 + 2000), 'cf:b=b@%d' % T0],
        'u#v': ['cf:a=a1@%d' % T0, 'cf:a=a2@%d' % (T0 + 1000), 'cf:a=a3@%d' % (T0 + 2000)],
        'u': ['cf:x=top@%d' % T0],
        'u#p': ['cf:x=p@%d' % T0],
        'u#p#1': ['cf:x=p1@%d' % T0, 'k1:y=p1y@%d' % T0],
        'u#p#2#z': ['cf:x=p2z@%d' % T0],
        'u#pq': ['cf:x=pq@%d' % T0],
        'u#only#r': ['cf:q=only@%d' % T0],
        'rn#src': ['cf:s=s1@%d' % T0, 'cf:s=s2@%d' % (T0 + 1000), 'cf:t=t1@%d' % T0],
        'rn#dst': ['cf:d=d1@%d' % (T0 + 500000), 'cf:d=d0@%d' % (T0 - 1000)],
        'rn#ver': ['cf:v=v1@%d' % T0, 'cf:v=v2@%d' % (T0 + 1000)],
        'rn#lone#r': ['cf:q=lone@%d' % T0],
        'rn#self': ['cf:q=self@%d' % T0],
        'mv#a': ['cf:x=a@%d' % T0],
        'mv#a#1': ['cf:y=a1@%d' % T0, 'cf:y=a1old@%d' % (T0 - 1000)],
        'mv#a#1#2': ['k1:z=a12@%d' % T0],
        'mv#ab': ['cf:x=ab@%d' % T0],
        'mv#full': ['cf:x=full@%d' % T0],
        'fam#r': ['cf:x=x@%d' % T0, 'k1:y=y@%d' % T0],
        'rm#r': ['cf:x=x@%d' % T0],
        'x#r': ['cf:q=x@%d' % T0, 'cf:q=x2@%d' % (T0 + 1000), 'cf:q=x3@%d' % (T0 + 2000)],
        'rv#a': ['cf:a=a1@%d' % T0, 'cf:a=a2@%d' % (T0 + 1000), 'cf:a=a3@%d' % (T0 + 2000)],
        'rv#b': ['cf:b=b0@%d' % (T0 - 5000), 'cf:b=bsame@%d' % (T0 + 1000), 'cf:b=bnew@%d' % (T0 + 500000)],
        'rv#c': ['cf:c=c1@%d' % T0, 'cf:c=c2@%d' % (T0 + 1000), 'cf:d=dnew@%d' % (T0 + 900000),
                 'cf:d=dold@%d' % (T0 - 1000)],
        'rv#v': ['cf:q=q1@%d' % T0, 'cf:q=q2@%d' % (T0 + 1000), 'cf:q=q3@%d' % (T0 + 2000)],
        'rv#t': ['cf:r=r1@%d' % T0, 'cf:r=r2@%d' % (T0 + 1000)],
        'rv#e': ['cf:e=e0@0', 'cf:e=e1@1000'],
    }
    for row, cs in cells.items():
        cellctl('set', 'w', row, *cs)
    cellctl('createtable', 'w2', 'families=cf')
    cellctl('set', 'w2', 'x', 'cf:q=w2@%d' % T0)
    cellctl('createtable', 'e1', 'families=cf,k1')  # empty, with families: rmdir drops it
    cellctl('createtable', 'full', 'families=cf')
    cellctl('set', 'full', 'r', 'cf:q=full@%d' % T0)
    cellctl('createtable', 'ren', 'families=cf,k1:maxversions=3')
    cellctl('set', 'ren', 'a#b', 'cf:q=ren@%d' % T0, 'k1:z=z@%d' % T0)
    cellctl('createtable', 'ren2', 'families=cf')
    cellctl('set', 'ren2', 'r', 'cf:q=ren2@%d' % T0)
    cellctl('createtable', 'ren3', 'families=cf')  # empty: a rename onto it replaces it
    cellctl('createtable', 'xa', 'families=cf,full,gone')
    cellctl('createtable', 'deep', 'families=cf')  # keys near 4 KiB (mountcheck's tree skips ls on 'deep')
    cellctl('set', 'xa', 'r', 'cf:q=a@%d' % T0, 'cf:q=b@%d' % (T0 + 1000), 'cf:q=c@%d' % (T0 + 2000),
            'full:q=f@%d' % T0)
    print('seed: %d cells' % len(snap().cells))


# ---- main: the read-write mount ------------------------------------------------------------------------------

HELD = []  # directories only the daemon holds when main ends (gone after a remount)


@scenario
def handles_create():
    """echo v > NEW: one new cell, now in whole ms; the mount shows it (cat, stat) at once, as cellctl does."""
    os.makedirs(M('w/c/r1/cf'))
    b = snap()
    t0 = now_us()
    sh_ok('echo > new file', 'echo hello > w/c/r1/cf/new')
    t1 = now_us()
    a = snap()
    ts = new_cell('echo > new file: one new cell', b, a, 'w', b'c#r1', 'cf', b'new', b'hello\n', t0, t1)
    if ts:
        sees('echo > new file', M('w/c/r1/cf/new'), b'hello\n', ts)
        out = cellctl('lookup', 'w', 'c#r1')
        ok('echo > new file: cellctl lookup shows it at once', b'"hello\\n"' in out, out.decode()[:300])
    # a second write of another column right after: distinct columns, one cell each
    b = snap()
    t0 = now_us()
    write(M('w/c/r1/cf/other'), b'\x00\xffbin')
    a = snap()
    new_cell('write(2) of bytes with NUL and 0xFF: the exact bytes', b, a, 'w', b'c#r1', 'cf', b'other',
             b'\x00\xffbin', t0, now_us())
    # an empty new file: one empty cell
    b = snap()
    t0 = now_us()
    sh_ok(': > new file', ': > w/c/r1/cf/empty')
    new_cell(': > new file: one empty cell', b, snap(), 'w', b'c#r1', 'cf', b'empty', b'', t0, now_us())


@scenario
def handles_one_version_per_handle():
    """Every flush of one handle rewrites the same version; fsync too; release writes nothing more."""
    b = snap()
    t0 = now_us()
    sh_ok('exec 3>f; echo a >&3; echo b >&3; exec 3>&-', 'exec 3>w/h/dup/cf/q; echo a >&3; echo b >&3; exec 3>&-')
    a = snap()
    new_cell('dup\'d descriptors closed twice: ONE new version "a\\nb\\n"', b, a, 'w', b'h#dup', 'cf', b'q',
             b'a\nb\n', t0, now_us())
    # the same with system calls, looking at the store between the steps
    path = M('w/h/dup/cf/sys')
    b = snap()
    t0 = now_us()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, b'x')
        os.close(os.dup(fd))  # flush
        a1 = snap()
        ts = new_cell('a flush (close of a dup) writes the handle back', b, a1, 'w', b'h#dup', 'cf', b'sys', b'x',
                      t0, now_us())
        os.write(fd, b'y')
        os.fsync(fd)
        a2 = snap()
        if ts:
            expect('fsync after more writes: the same version rewritten', a1, a2,
                   changed={('w', b'h#dup', 'cf', b'sys', ts): b'xy'})
        os.write(fd, b'z')
        os.close(os.dup(fd))
        os.close(os.dup(fd))
        a3 = snap()
        if ts:
            expect('two more flushes: the same version rewritten again', a2, a3,
                   changed={('w', b'h#dup', 'cf', b'sys', ts): b'xyz'})
    finally:
        os.close(fd)
    a4 = snap()
    same('release of a handle written back already', a3, a4)
    col = a4.column('w', b'h#dup', 'cf', b'sys')
    ok('one handle, three write-backs: one version in all', list(col.values()) == [b'xyz'] and
       len(delta(b, a4)[0]) == 1, describe(b, a4))


@scenario
def handles_unchanged():
    """A handle that changed nothing writes nothing."""
    p = M('w/h/none/cf/q')
    for what, flags in (('O_RDWR', os.O_RDWR), ('O_WRONLY', os.O_WRONLY), ('O_WRONLY|O_APPEND',
                        os.O_WRONLY | os.O_APPEND), ('O_RDWR|O_CREAT', os.O_RDWR | os.O_CREAT)):
        b = snap()
        fd = os.open(p, flags)
        if flags & os.O_RDWR:
            os.read(fd, 100)
        os.close(os.dup(fd))
        os.fsync(fd)
        os.close(fd)
        same('open %s, read, flush, fsync, close, nothing written: no new version' % what, b, snap())
    b = snap()
    sh_ok(': >> f', ': >> w/h/none/cf/q')
    same(': >> f (append nothing): no new version', b, snap())
    b = snap()
    sh_ok(': > f on an empty value', ': > w/h/none/cf/e')
    same(': > f on an empty value (O_TRUNC cuts nothing): no new version', b, snap())
    b = snap()
    fd = os.open(p, os.O_RDWR)
    os.ftruncate(fd, 4)  # its own length
    os.pwrite(fd, b'', 2)
    os.close(fd)
    same('ftruncate to the same length and a 0-byte write: no new version', b, snap())
    b = snap()
    os.truncate(p, 4)
    same('truncate(path) to the same length: no new version', b, snap())


@scenario
def handles_overwrite_append():
    p = M('w/h/over/cf/q')
    b = snap()
    t0 = now_us()
    sh_ok('echo x > existing', 'echo x > w/h/over/cf/q')
    a = snap()
    ts = new_cell('echo x > existing: a new version "x\\n", older ones kept', b, a, 'w', b'h#over', 'cf', b'q', b'x\n',
                  t0, now_us())
    if ts:
        sees('echo x > existing', p, b'x\n', ts)
        names = listdir(M('w/h/over/cf'))
        want = sorted(['q', 'q@%016d' % (T0 + 1000), 'q@%016d' % T0])
        ok('echo x > existing: the older versions listed as q@TS', names == want, '%s, want %s' % (names, want))
        ok('echo x > existing: q@TS of an older version reads it', read(M('w/h/over/cf/q@%016d' % T0)) == b'v1')
    b = snap()
    t0 = now_us()
    sh_ok(': > existing', ': > w/h/over/cf/q')
    new_cell(': > existing non-empty value: a new empty version', b, snap(), 'w', b'h#over', 'cf', b'q', b'', t0,
             now_us())
    # >> appends to the newest value, as a new version; a listing right after shows the old one as q@TS
    d = M('w/h/app/cf')
    listdir(d)  # the kernel has the listing now
    b = snap()
    t0 = now_us()
    sh_ok('echo >> existing', 'echo line2 >> w/h/app/cf/q')
    a = snap()
    ts = new_cell('echo >> existing: a new version, the newest value with the line appended', b, a, 'w', b'h#app',
                  'cf', b'q', b'line1line2\n', t0, now_us())
    ok('ls right after >>: shows the previous newest as q@TS', 'q@%016d' % T0 in listdir(d), str(listdir(d)))
    if ts:
        sees('echo >> existing', M('w/h/app/cf/q'), b'line1line2\n', ts)
    b = snap()
    t0 = now_us()
    sh_ok('printf >> twice', 'printf "%s" 3 >> w/h/app/cf/q; printf "\\x00" >> w/h/app/cf/q')
    a = snap()
    ad, _, _ = delta(b, a)
    col = a.column('w', b'h#app', 'cf', b'q')
    ok('two >> in a row: two new versions, each the one before with its bytes appended',
       sorted(ad.values()) == [b'line1line2\n3', b'line1line2\n3\x00'] and len(col) == 4,
       describe(b, a))
    # O_APPEND writes go to the end whatever the offset
    b = snap()
    t0 = now_us()
    fd = os.open(M('w/h/app/cf/q'), os.O_WRONLY | os.O_APPEND)
    os.write(fd, b'A')
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, b'B')
    os.close(fd)
    new_cell('O_APPEND: writes go to the end after an lseek to 0', b, snap(), 'w', b'h#app', 'cf', b'q',
             b'line1line2\n3\x00AB', t0, now_us())


@scenario
def handles_concurrent():
    """Two handles on one file: each writes its own version; a handle on a file removed meanwhile."""
    os.makedirs(M('w/h/two/cf'))
    b = snap()
    t0 = now_us()
    f1 = os.open(M('w/h/two/cf/q'), os.O_WRONLY | os.O_CREAT, 0o644)
    f2 = os.open(M('w/h/two/cf/q'), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(f1, b'first')
    os.write(f2, b'second')
    os.close(f1)
    os.close(f2)
    a = snap()
    col = a.column('w', b'h#two', 'cf', b'q')
    ok('two handles on one new file, both written, closed in turn: two versions, the last closed newest',
       [v for _, v in sorted(col.items())] == [b'first', b'second'] and len(delta(b, a)[0]) == 2 and
       all(t % 1000 == 0 and t >= t0 // 1000 * 1000 for t in col), describe(b, a))
    b = snap()
    fd = os.open(M('w/h/two/cf/gone'), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'one')
        os.fsync(fd)
        os.unlink(M('w/h/two/cf/gone'))
        os.write(fd, b'two')
    finally:
        os.close(fd)
    a = snap()
    ok('a file removed while a handle writes it: the handle\'s later write-back does not bring it back',
       not a.column('w', b'h#two', 'cf', b'gone') and 'gone' not in listdir(M('w/h/two/cf')), describe(b, a))


@scenario
def handles_read_own_writes():
    p = M('w/h/rw/cf/q')
    b = snap()
    t0 = now_us()
    fd = os.open(p, os.O_RDWR)
    try:
        os.write(fd, b'HE')
        os.lseek(fd, 0, os.SEEK_SET)
        got = os.read(fd, 100)
        ok('O_RDWR: write, lseek, read gives the unflushed write', got == b'HEllo world', short(got))
        os.pwrite(fd, b'!', 14)
        got = os.pread(fd, 100, 9)
        ok('pwrite past the end: a hole of zeros, read back before any flush', got == b'ld\x00\x00\x00!', short(got))
        ok('fstat of the handle: its size', os.fstat(fd).st_size == 15, str(os.fstat(fd).st_size))
        same('nothing is written before the flush', b, snap())
    finally:
        os.close(fd)
    new_cell('close of the O_RDWR handle: one version with both edits', b, snap(), 'w', b'h#rw', 'cf', b'q',
             b'HEllo world\x00\x00\x00!', t0, now_us())
    fd = os.open(M('w/h/rw/cf/new'), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'abc')
        try:
            size = os.fstat(fd).st_size
        except OSError as e:
            size = ename(e.errno)
        ok('fstat of a new file\'s handle after a write, before any flush: its size', size == 3, str(size))
    finally:
        os.close(fd)


@scenario
def handles_truncate():
    p = M('w/h/trunc/cf/q')
    b = snap()
    t0 = now_us()
    fd = os.open(p, os.O_RDWR)
    os.ftruncate(fd, 3)
    os.close(fd)
    new_cell('ftruncate shorter: a new version, cut', b, snap(), 'w', b'h#trunc', 'cf', b'q', b'012', t0, now_us())
    b = snap()
    t0 = now_us()
    fd = os.open(p, os.O_RDWR)
    os.ftruncate(fd, 6)
    os.close(fd)
    new_cell('ftruncate longer: a new version, zero-extended', b, snap(), 'w', b'h#trunc', 'cf', b'q',
             b'012\x00\x00\x00', t0, now_us())
    b = snap()
    t0 = now_us()
    fd = os.open(p, os.O_RDWR)
    os.write(fd, b'abcdefgh')
    os.ftruncate(fd, 2)
    os.write(fd, b'Z')  # at offset 8: zeros from 2 to 8
    os.close(fd)
    new_cell('write, ftruncate, write at the old offset: one version', b, snap(), 'w', b'h#trunc', 'cf', b'q',
             b'ab' + b'\x00' * 6 + b'Z', t0, now_us())
    pp = M('w/h/trunc/cf/p')
    b = snap()
    t0 = now_us()
    os.truncate(pp, 2)
    new_cell('truncate(path) shorter: a new version', b, snap(), 'w', b'h#trunc', 'cf', b'p', b'ab', t0, now_us())
    sees('truncate(path) shorter', pp, b'ab')
    b = snap()
    t0 = now_us()
    sh_ok('truncate -s 5', 'truncate -s 5 w/h/trunc/cf/p')
    new_cell('truncate -s longer: a new version, zero-extended', b, snap(), 'w', b'h#trunc', 'cf', b'p',
             b'ab\x00\x00\x00', t0, now_us())
    b = snap()
    t0 = now_us()
    os.truncate(M('w/h/trunc/cf/z'), 3)
    new_cell('truncate(path) of an empty value to 3: zeros', b, snap(), 'w', b'h#trunc', 'cf', b'z', b'\0\0\0',
             t0, now_us())


@scenario
def handles_future_newest():
    """A column whose newest cell lies in the future: the next write goes 1 ms after it."""
    fut = (now_us() + 86400 * 10**6) // 1000 * 1000 + 123  # tomorrow, not on a millisecond
    os.makedirs(M('w/h/fut/cf'))
    b = snap()
    write(M('w/h/fut/cf/q@%016d' % fut), b'future')
    expect('writing q@TS (a new column, TS tomorrow): exactly that cell', b, snap(),
           added={('w', b'h#fut', 'cf', b'q', fut): b'future'})
    b = snap()
    sh_ok('echo > column with a future newest', 'echo next > w/h/fut/cf/q')
    want = (fut // 1000 + 1) * 1000
    expect('echo > a column whose newest is in the future: at the next whole ms after it', b, snap(),
           added={('w', b'h#fut', 'cf', b'q', want): b'next\n'})
    sees('echo > column with a future newest', M('w/h/fut/cf/q'), b'next\n', want)
    b = snap()
    sh_ok('echo >> column with a future newest', 'echo more >> w/h/fut/cf/q')
    expect('echo >> again: 1 ms later again', b, snap(),
           added={('w', b'h#fut', 'cf', b'q', want + 1000): b'next\nmore\n'})


@scenario
def handles_efbig():
    p = M('w/h/big/cf/q')
    fd = os.open(p, os.O_RDWR)
    try:
        b = snap()
        e = errno_of(os.pwrite, fd, b'x', VALUE_MAX)
        ok('pwrite ending 1 byte past the value limit (100 MiB): EFBIG', e == errno.EFBIG, ename(e))
        e = errno_of(os.ftruncate, fd, VALUE_MAX + 1)
        ok('ftruncate to the limit + 1: EFBIG', e == errno.EFBIG, ename(e))
        got = os.pread(fd, 100, 0)
        ok('after EFBIG: the handle still reads the value', got == b'small', short(got))
    finally:
        e = errno_of(os.close, fd)
    ok('close of a handle whose write failed with EFBIG: EFBIG', e == errno.EFBIG, ename(e))
    same('a handle whose writes all failed with EFBIG, closed', b, snap())
    expect_err('truncate(path) to the limit + 1', errno.EFBIG, os.truncate, p, VALUE_MAX + 1)
    fd = os.open(p, os.O_RDWR)
    try:
        b = snap()
        os.write(fd, b'S')
        e = errno_of(os.pwrite, fd, b'yy', VALUE_MAX - 1)  # one request straddling the limit
        ok('pwrite straddling the limit after a good write: EFBIG', e == errno.EFBIG, ename(e))
        got = os.pread(fd, 100, 0)
        ok('after EFBIG: the handle keeps the good write', got == b'Small', short(got))
        e = errno_of(os.fsync, fd)
        ok('fsync after an EFBIG: EFBIG', e == errno.EFBIG, ename(e))
    finally:
        e = errno_of(os.close, fd)
    ok('close after a good write and an EFBIG: EFBIG', e == errno.EFBIG, ename(e))
    same('close after a good write and an EFBIG: nothing written back (a failed write leaves the value)', b,
         snap())
    # dd past the limit: its first 100 MiB are not written back, the old value stays (maxversions=1 too)
    os.makedirs(M('w/h/dd/k1'))
    os.makedirs(M('w/h/dd/cf'))
    for fam in ('cf', 'k1'):
        p2 = M('w/h/dd/%s/big' % fam)
        write(p2, b'old\n')
        b = snap()
        rc, out, err = sh('dd if=/dev/zero of=%s bs=1M count=110 status=none' % p2)
        ok('dd of 110 MiB into %s: fails, naming EFBIG' % fam, rc != 0 and b'too large' in err,
           'exit %d, stderr %r' % (rc, err[:300]))
        same('dd of 110 MiB into %s: the old value stays' % fam, b, snap())
        ok('... the mount reads it', read(p2) == b'old\n', short(read(p2)))
    # exactly the limit is allowed (a 100 MiB value: removed again at once, the later dumps stay small)
    b = snap()
    t0 = now_us()
    fd = os.open(p, os.O_RDWR)
    os.ftruncate(fd, VALUE_MAX)
    os.close(fd)
    a = snap()
    ts = new_cell('ftruncate to exactly the limit (100 MiB): a new version', b, a, 'w', b'h#big', 'cf', b'q',
                  b'small' + bytes(VALUE_MAX - 5), t0, now_us())
    if ts:
        ok('the 100 MiB version: stat size', os.stat(p).st_size == VALUE_MAX, str(os.stat(p).st_size))
        os.unlink(M('w/h/big/cf/q@%016d' % ts))
        expect('rm q@TS of the 100 MiB version', a, snap(), removed=[('w', b'h#big', 'cf', b'q', ts)])
    del a, b  # (a 100 MiB value)


@scenario
def qts_names():
    d = M('w/v/q/cf')
    # an older timestamp that is not there: exactly that cell; the bare name unchanged
    b = snap()
    sh_ok('echo > q@TS (older, new)', 'echo restored > w/v/q/cf/q@%016d' % (T0 + 1000))
    expect('echo > q@TS, TS older than the newest: exactly that cell', b, snap(),
           added={('w', b'v#q', 'cf', b'q', T0 + 1000): b'restored\n'})
    ok('q@TS older: the bare name still reads the newest', read(M('w/v/q/cf/q')) == b'v2', short(read(d + '/q')))
    ok('q@TS older: listed', 'q@%016d' % (T0 + 1000) in listdir(d), str(listdir(d)))
    # an existing version: that cell replaced
    b = snap()
    write(d + '/q@%016d' % T0, b'V1')
    expect('write q@TS of an existing version: that cell replaced', b, snap(),
           changed={('w', b'v#q', 'cf', b'q', T0): b'V1'})
    # the newest, by its unlisted Q@TS name
    b = snap()
    write(d + '/q@%016d' % (T0 + 2000), b'V2', os.O_WRONLY | os.O_APPEND)
    expect('O_APPEND to the newest\'s q@TS: that cell rewritten in place', b, snap(),
           changed={('w', b'v#q', 'cf', b'q', T0 + 2000): b'v2V2'})
    got = read(d + '/q')  # (read before the write: its pages cached)
    ok('the bare name reads the newest cell written by its q@TS name, at once', got == b'v2V2', short(got))
    b = snap()
    os.truncate(d + '/q@%016d' % T0, 1)
    expect('truncate(q@TS): that cell rewritten, no new version', b, snap(),
           changed={('w', b'v#q', 'cf', b'q', T0): b'V'})
    # newer than the newest: the bare name shows it
    b = snap()
    write(d + '/q@%016d' % (T0 + 3000), b'newer')
    expect('write q@TS newer than the newest: that cell', b, snap(),
           added={('w', b'v#q', 'cf', b'q', T0 + 3000): b'newer'})
    sees('q@TS newer than the newest, as the bare name', d + '/q', b'newer', T0 + 3000)
    # a new column by a version name; timestamp 0
    b = snap()
    write(d + '/fresh@%016d' % 5, b'five')
    write(d + '/zero@0000000000000000', b'')
    expect('q@TS of a column that is not there: creates it with that cell (ts 5, ts 0)', b, snap(),
           added={('w', b'v#q', 'cf', b'fresh', 5): b'five', ('w', b'v#q', 'cf', b'zero', 0): b''})
    # a touch on a q@TS changes nothing
    b = snap()
    os.utime(d + '/q@%016d' % T0, ns=(T0 * 1000, (T0 + 7000) * 1000))
    same('utimensat on q@TS: succeeds, changes nothing', b, snap())
    for bad in ('q@123', 'q@00000000000000001', 'q@abcdefghijklmnop', 'q@-000000000000001', 'q@'):
        expect_err('create %s (not a 16-digit timestamp)' % bad, errno.EINVAL, write, d + '/' + bad, b'x')


@scenario
def times():
    d = M('w/tm/r/cf')
    b = snap()
    sh_ok('touch -d on a new file', 'touch -d @1426535612.5 w/tm/r/cf/new')
    expect('touch -d DATE on a new file: one empty cell at DATE', b, snap(),
           added={('w', b'tm#r', 'cf', b'new', 1426535612500000): b''})
    b = snap()
    t0 = now_us()
    sh_ok('touch on a new file', 'touch w/tm/r/cf/new2')
    new_cell('touch on a new file: one empty cell, now', b, snap(), 'w', b'tm#r', 'cf', b'new2', b'', t0, now_us())
    # futimens on the handle, after the write and before it
    b = snap()
    fd = os.open(d + '/fut', os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b'data')
    os.utime(fd, ns=(0, 1426535612123456789))
    os.close(fd)
    expect('write, futimens(µs.789 ns), close: one cell at that time in µs', b, snap(),
           added={('w', b'tm#r', 'cf', b'fut', 1426535612123456): b'data'})
    sees('futimens on a handle', d + '/fut', b'data', 1426535612123456)
    b = snap()
    fd = os.open(d + '/fut2', os.O_WRONLY | os.O_CREAT, 0o644)
    os.utime(fd, ns=(0, 1426535600000001000))
    os.write(fd, b'after')
    os.close(os.dup(fd))
    os.write(fd, b'!')
    os.close(fd)
    expect('futimens, write, flush, write, close: one cell at that time', b, snap(),
           added={('w', b'tm#r', 'cf', b'fut2', 1426535600000001): b'after!'})
    # cp -a / cp -p of a local file carries its mtime
    src = os.path.join(WORK, 'cpa-src')
    with open(src, 'wb') as f:
        f.write(b'copied\n')
    os.utime(src, ns=(0, 1426535612987654321))
    b = snap()
    sh_ok('cp -a file', 'cp -a %s w/tm/r/cf/cpa' % src)
    expect('cp -a of a file: one cell at its mtime (µs)', b, snap(),
           added={('w', b'tm#r', 'cf', b'cpa', 1426535612987654): b'copied\n'})
    b = snap()
    sh_ok('cp -p onto an existing file', 'cp -p %s w/tm/r/cf/q' % src)
    expect('cp -p onto an existing column: a new version at the source\'s mtime', b, snap(),
           added={('w', b'tm#r', 'cf', b'q', 1426535612987654): b'copied\n'})
    # touch -d on an existing bare name: its newest cell re-stamped
    b = snap()
    newest = max(b.column('w', b'tm#r', 'cf', b'q'))
    sh_ok('touch -d on an existing file', 'touch -d @1500000000.25 w/tm/r/cf/q')
    expect('touch -d on an existing bare name: its newest cell moves to DATE, same value', b, snap(),
           added={('w', b'tm#r', 'cf', b'q', 1500000000250000): b'copied\n'},
           removed=[('w', b'tm#r', 'cf', b'q', newest)])
    sees('touch -d on an existing bare name', d + '/q', b'copied\n', 1500000000250000)
    expect_err('utimensat onto the time of another version of the column', errno.EEXIST, os.utime, d + '/q',
               ns=(0, (T0 + 1000) * 1000))
    b = snap()
    t0 = now_us()
    sh_ok('touch on an existing file', 'touch w/tm/r/cf/n')
    a = snap()
    ad, rm, ch = delta(b, a)
    good = list(ad.values()) == [b'now'] and list(rm) == [('w', b'tm#r', 'cf', b'n', T0)] and not ch
    ok('touch (now) on an existing bare name: its newest cell moves to now, same value', good, describe(b, a))
    if good:
        ts = next(iter(ad))[4]
        ok('touch (now): a whole millisecond of now', ts % 1000 == 0 and t0 // 1000 * 1000 <= ts <= now_us(), str(ts))
    # touch (now) where now is not after the newest: it never moves the column back (neither EINVAL, nor
    # EEXIST when a touch, a write and a touch fall in one millisecond)
    fut = (now_us() // 1000 + 60000) * 1000
    write(M('w/tm/r/cf/fut'), b'now')
    write(M('w/tm/r/cf/fut@%016d' % fut), b'one')
    write(M('w/tm/r/cf/fut@%016d' % (fut + 60000000)), b'two')
    b = snap()
    sh_ok('touch on a column whose newest lies in the future, past another version', 'touch w/tm/r/cf/fut')
    same('touch on a column whose newest lies in the future: nothing moves', b, snap())
    write(M('w/tm/r/cf/ms'), b'x')
    for i in range(20):  # touch, write, touch: often within one millisecond
        e = errno_of(os.utime, M('w/tm/r/cf/ms')) or sh('touch w/tm/r/cf/ms')[0]
        if e:
            break
        write(M('w/tm/r/cf/ms'), b'%d' % i)
    ok('touch right after a write, 20 times: never refused', e == 0, ename(e))
    # a time before 1970: no cell can have it (Bigtable has no negative timestamps): EINVAL, never the epoch
    expect_err('touch -d 1960-01-01 on an existing file', errno.EINVAL, os.utime, d + '/v',
               ns=(0, -315619200 * 10**9))
    rc, out, err = sh('touch -d 1960-01-01 w/tm/r/cf/v')
    ok('touch -d 1960-01-01: fails, naming EINVAL', rc != 0 and b'Invalid argument' in err, 'exit %d %r' % (rc, err))
    b = snap()
    fd = os.open(d + '/old', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'sixties')
        e = errno_of(os.utime, fd, ns=(0, -315619200 * 10**9))
        ok('futimens before 1970 on an open handle: EINVAL', e == errno.EINVAL, ename(e))
        t0 = now_us()
    finally:
        os.close(fd)
    new_cell('... the handle is written back at now, not at the epoch', b, snap(), 'w', b'tm#r', 'cf', b'old',
             b'sixties', t0, now_us())
    src = os.path.join(WORK, 'sixties')
    with open(src, 'wb') as f:
        f.write(b'1960\n')
    os.utime(src, ns=(0, -315619200 * 10**9))
    b = snap()
    rc, out, err = sh('cp -a %s w/tm/r/cf/cp60' % src)
    a = snap()
    ok('cp -a of a file from 1960: fails, naming EINVAL', rc != 0 and b'Invalid argument' in err,
       'exit %d %r' % (rc, err))
    ok('... no cell at the epoch', not [k for k in delta(b, a)[0] if k[4] <= 0], describe(b, a))
    b = snap()
    sh_ok('touch -a', 'touch -a -d @1600000000 w/tm/r/cf/v')
    same('touch -a (the access time only) on a bare name', b, snap())
    # no effect
    for what, path in (('a Q@TS name', d + '/v@%016d' % T0), ('a family directory', d), ('a key directory',
                       M('w/tm/r')), ('a table directory', M('w')), ('the root', MNT)):
        b = snap()
        e = errno_of(os.utime, path, ns=(10**18, 10**18))
        ok('utimensat on %s: succeeds' % what, e == 0, ename(e))
        same('utimensat on %s' % what, b, snap())
    for what, path, mode in (('a file', d + '/v', 0o100644), ('a Q@TS name', d + '/v@%016d' % T0, 0o100644),
                             ('a family directory', d, 0o40755), ('a key directory', M('w/tm'), 0o40755),
                             ('a table', M('w'), 0o40755)):
        b = snap()
        e1 = errno_of(os.chmod, path, 0o600)
        e2 = errno_of(os.chown, path, 0, 0)
        e3 = errno_of(os.chown, path, 1234, 1234)
        ok('chmod and chown on %s: succeed' % what, (e1, e2, e3) == (0, 0, 0), '%s %s %s' % (ename(e1), ename(e2),
                                                                                            ename(e3)))
        st = os.stat(path)
        ok('chmod and chown on %s: mode and owner unchanged' % what,
           st.st_mode == mode and st.st_uid == os.getuid(), 'mode %o uid %d' % (st.st_mode, st.st_uid))
        same('chmod and chown on %s' % what, b, snap())


@scenario
def unlink():
    d = M('w/u/r/cf')
    b = snap()
    os.unlink(d + '/a@%016d' % (T0 + 1000))
    expect('rm q@TS (an older version): that cell only', b, snap(), removed=[('w', b'u#r', 'cf', b'a', T0 + 1000)])
    ok('rm q@TS: no longer listed', 'a@%016d' % (T0 + 1000) not in listdir(d), str(listdir(d)))
    b = snap()
    os.unlink(M('w/u/v/cf/a@%016d' % (T0 + 2000)))
    expect('rm q@TS of the newest (unlisted name): that cell only', b, snap(),
           removed=[('w', b'u#v', 'cf', b'a', T0 + 2000)])
    sees('rm of the newest q@TS: the bare name is the one before', M('w/u/v/cf/a'), b'a2', T0 + 1000)
    b = snap()
    sh_ok('rm bare name', 'rm w/u/r/cf/a')
    expect('rm q (bare name): the column, every version', b, snap(),
           removed=[k for k in b.cells if k[:4] == ('w', b'u#r', 'cf', b'a')])
    ok('rm q: neither q nor its versions listed', listdir(d) == ['b'], str(listdir(d)))
    expect_err('rm of a name that is not there', errno.ENOENT, os.unlink, d + '/nothere')
    expect_err('rm q@TS of a version that is not there', errno.ENOENT, os.unlink, d + '/b@%016d' % (T0 + 5))
    expect_err('unlink(2) of a key directory', (errno.EISDIR, errno.EPERM), os.unlink, M('w/u/r'))
    expect_err('unlink(2) of a family directory', (errno.EISDIR, errno.EPERM), os.unlink, d)
    # rm -r of a prefix: the rows under it (u#p, u#p#...), not u#pq nor u
    b = snap()
    sh_ok('rm -r prefix', 'rm -r w/u/p')
    expect('rm -r of a key directory: every row under it, and no other', b, snap(),
           removed=[k for k in b.cells if k[0] == 'w' and (k[1] == b'u#p' or k[1].startswith(b'u#p#'))])
    ok('rm -r prefix: gone from the listing', 'p' not in listdir(M('w/u')) and 'pq' in listdir(M('w/u')),
       str(listdir(M('w/u'))))
    # rm -r of a row whose column has older versions: rm unlinks q (the column, every version), then the
    # q@TS it listed before, whose cell is gone already; that must not fail (it did: ENOENT, rm exit 1)
    os.makedirs(M('w/u/mv/cf'))
    for v in (b'one', b'two', b'three'):
        with open(M('w/u/mv/cf/a'), 'wb') as f:
            f.write(v)
    ok('three versions listed', len(listdir(M('w/u/mv/cf'))) == 3, str(listdir(M('w/u/mv/cf'))))
    b = snap()
    sh_ok('rm -r of a row with older versions', 'rm -r w/u/mv')
    expect('rm -r of a row with older versions: every version gone, nothing else', b, snap(),
           removed=[k for k in b.cells if k[0] == 'w' and k[1] == b'u#mv'])
    ok('rm -r of a row with older versions: gone from the listing', 'mv' not in listdir(M('w/u')),
       str(listdir(M('w/u'))))
    # a directory emptied through the mount stays until rmdir
    b = snap()
    os.unlink(M('w/u/only/r/cf/q'))
    expect('rm of the last cell of a row', b, snap(), removed=[('w', b'u#only#r', 'cf', b'q', T0)])
    ok('the emptied family directory stays, empty', listdir(M('w/u/only/r/cf')) == [], str(listdir(M('w/u/only/r/cf'))))
    ok('the emptied row directory stays', listdir(M('w/u/only/r')) == ['cf'], str(listdir(M('w/u/only/r'))))
    ok('the emptied prefix directory stays', listdir(M('w/u/only')) == ['r'], str(listdir(M('w/u/only'))))
    ok('stat of an emptied directory: a directory', S.S_ISDIR(os.stat(M('w/u/only/r/cf')).st_mode))
    expect_err('rmdir of an emptied directory that holds one', errno.ENOTEMPTY, os.rmdir, M('w/u/only'))
    b = snap()
    for p in ('w/u/only/r/cf', 'w/u/only/r', 'w/u/only'):
        e = errno_of(os.rmdir, M(p))
        ok('rmdir %s (emptied through the mount): succeeds' % p, e == 0, ename(e))
    same('rmdir of emptied directories', b, snap())
    ok('rmdir of emptied directories: gone', 'only' not in listdir(M('w/u')), str(listdir(M('w/u'))))


@scenario
def mkdir_tables():
    b = snap()
    os.mkdir(M('made'))
    a = snap()
    good = set(a.tables) - set(b.tables) == {'made'} and a.tables['made'][0] == ord('#') and a.cells == b.cells \
        and a.fams == b.fams
    ok('mkdir at the top: a table, delimiter \'#\', no families, no rows', good, describe(b, a))
    ok('mkdir at the top: listed, an empty directory', 'made' in listdir(MNT) and listdir(M('made')) == [])
    g = os.getxattr(M('made'), 'user.cellfs.delimiter')
    ok('mkdir at the top: user.cellfs.delimiter is #', g == b'#', short(g))
    expect_err('mkdir of an existing table', errno.EEXIST, os.mkdir, M('made'))
    for bad in ('bad name', '-lead', 'x' * 51, 'a%41', 'é'):
        expect_err('mkdir at the top, not a table name: %r' % bad[:20], (errno.EINVAL, errno.ENAMETOOLONG), os.mkdir,
                   M(bad))
    # a table made with mkdir: mkdir -p inside and files make rows and families
    b = snap()
    sh_ok('mkdir -p + echo in a new table',
          'mkdir -p made/NASDAQ/ZXZZT/1426/MD && echo 1 > made/NASDAQ/ZXZZT/1426/MD/BID')
    a = snap()
    ad, rm, ch = delta(b, a)
    good = list(ad) and [k[:4] for k in ad] == [('made', b'NASDAQ#ZXZZT#1426', 'MD', b'BID')] and \
        list(ad.values()) == [b'1\n'] and not rm and not ch
    ok('mkdir -p T/NASDAQ/ZXZZT/1426/MD && echo 1 > .../MD/BID: row NASDAQ#ZXZZT#1426, MD:BID', good, describe(b, a))
    ok('... family MD created with GC policy never', a.fams.get(('made', 'MD')) == b'never' and
       set(a.fams) - set(b.fams) == {('made', 'MD')}, str(sorted(a.fams.items())))
    ok('... the new family as an attribute of the table', os.getxattr(M('made'), 'user.cellfs.family.MD') == b'never')


@scenario
def mkdir_pending():
    b = snap()
    os.mkdir(M('w/pend'))
    os.makedirs(M('w/pend2/deeper/still'))
    os.mkdir(M('w/h/dup/k1'))        # an existing family of the table, for a row that has none of its cells
    os.mkdir(M('w/h/dup/newfam'))    # not a family yet: a key directory until a file is written in it
    same('mkdir of directories below a table', b, snap())
    ok('mkdir: listed in its parent', 'pend' in listdir(M('w')) and 'pend2' in listdir(M('w')), str(listdir(M('w'))))
    ok('mkdir: listed in a row directory', {'k1', 'newfam'} <= set(listdir(M('w/h/dup'))), str(listdir(M('w/h/dup'))))
    ok('mkdir: stat is an empty directory', S.S_ISDIR(os.stat(M('w/pend')).st_mode) and listdir(M('w/pend')) == [])
    ok('mkdir -p: every level listed', listdir(M('w/pend2')) == ['deeper'] and
       listdir(M('w/pend2/deeper')) == ['still'])
    expect_err('mkdir of a directory made already', errno.EEXIST, os.mkdir, M('w/pend'))
    expect_err('mkdir of a directory the store has', errno.EEXIST, os.mkdir, M('w/h'))
    expect_err('mkdir of a family directory the store has', errno.EEXIST, os.mkdir, M('w/h/dup/cf'))
    expect_err('rmdir of a made directory holding a made one', errno.ENOTEMPTY, os.rmdir, M('w/pend2/deeper'))
    expect_err('mkdir of an existing file\'s name', errno.EEXIST, os.mkdir, M('w/h/dup/cf/q'))
    # written into: the row and family appear
    b = snap()
    t0 = now_us()
    write(M('w/h/dup/k1/q'), b'k')
    new_cell('a file in a made directory named as a family: that family', b, snap(), 'w', b'h#dup', 'k1', b'q', b'k',
             t0, now_us())
    b = snap()
    t0 = now_us()
    write(M('w/h/dup/newfam/q'), b'n')
    a = snap()
    new_cell('a file in a made directory F: row P, family F (created)', b, a, 'w', b'h#dup', 'newfam', b'q', b'n', t0,
             now_us(), schema=False)
    ok('... family newfam created, GC never', a.fams.get(('w', 'newfam')) == b'never' and
       set(a.fams) - set(b.fams) == {('w', 'newfam')}, str(set(a.fams) - set(b.fams)))
    ok('... newfam now lists as a family directory with the file', listdir(M('w/h/dup/newfam')) == ['q'])
    b = snap()
    e1 = errno_of(os.utime, M('w/h/dup/newfam'), ns=(10**18, 10**18))
    e2 = errno_of(os.chmod, M('w/h/dup/newfam'), 0o700)
    ok('utimensat and chmod on a made directory that became a family (cp -a, rsync -a, mv do this): succeed',
       (e1, e2) == (0, 0), '%s %s' % (ename(e1), ename(e2)))
    same('utimensat and chmod on a made directory that became a family', b, snap())
    # a made directory that is then renamed, and one removed
    b = snap()
    os.mkdir(M('w/pend3'))
    os.rename(M('w/pend3'), M('w/pend4'))
    ok('rename of a made directory: listed under its new name only', 'pend4' in listdir(M('w')) and
       'pend3' not in listdir(M('w')), str(listdir(M('w'))))
    os.rmdir(M('w/pend4'))
    ok('rmdir of a made directory: gone', 'pend4' not in listdir(M('w')))
    same('mkdir, rename, rmdir of a made directory', b, snap())
    # A key segment named like a family, made under its escape (%63f: cf) while the family is there, stays
    # when a cell of that family is written in its row: the escaped directory is not the family's (a tar
    # restore in any order does this: mount-backup's shuffled archive).
    os.makedirs(M('w/pesc/%63f/1/cf'))
    os.mkdir(M('w/pesc/cf'))
    write(M('w/pesc/cf/q'), b'row pesc')
    ok('mkdir -p R/%63f/1/cf, then a cell in R/cf: R/%63f still listed', '%63f' in listdir(M('w/pesc')),
       str(listdir(M('w/pesc'))))
    e = errno_of(os.mkdir, M('w/pesc/%63f/1'))
    ok('... and its made subdirectory still under it (mkdir: EEXIST)', e == errno.EEXIST, ename(e))
    HELD.extend(['w/pend', 'w/pend2', 'w/pend2/deeper', 'w/pend2/deeper/still', 'w/pesc/%63f',
                 'w/pesc/%63f/1', 'w/pesc/%63f/1/cf'])


def short_form(b):
    """name.h rule 6 for bytes that need no escape: the first 200, '%~', FNV-1a-64 of them all."""
    h = 0xcbf29ce484222325
    for c in b:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return b[:200].decode() + '%%~%016X' % h


@scenario
def whole_names():
    """Names beyond NAME_MAX: an entry made with a short form nothing holds gets its bytes from the attribute
    user.cellfs.name (what cp -a, tar --xattrs and rsync -X set), which every short-form entry shows."""
    d = M('w/h/dup/cf')
    q = b'q' * 300
    b = snap()
    fd = os.open(os.path.join(d, short_form(q)), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b'v1')
    e = errno_of(os.setxattr, fd, 'user.cellfs.name', b'x' * 300)
    ok('user.cellfs.name that the name is not the short form of: EINVAL', e == errno.EINVAL, ename(e))
    os.setxattr(fd, 'user.cellfs.name', q)
    os.close(fd)
    added, removed, changed = delta(b, snap())
    ok('create with a short form, user.cellfs.name, close: one cell of those bytes',
       list(added.values()) == [b'v1'] and [k[3] for k in added] == [q] and not removed and not changed,
       repr(list(added)[:2])[:200])
    ok('... read back by its short form', read(os.path.join(d, short_form(q))) == b'v1')
    ok('... which shows user.cellfs.name', os.listxattr(os.path.join(d, short_form(q))) == ['user.cellfs.name'] and
       os.getxattr(os.path.join(d, short_form(q)), 'user.cellfs.name') == q)
    ok('a full name shows no attribute', os.listxattr(M('w/h/dup')) == [])

    # a directory made with a short form, filled, then named (cp -a and tar name directories last)
    k = b'k' * 300
    b = snap()
    os.makedirs(M('w/h', short_form(k), 'cf'))
    write(M('w/h', short_form(k), 'cf', 'c'), b'under')
    mid = delta(b, snap())[0]
    ok('... its rows wait under the bytes of the short form', [x[1] for x in mid] == [b'h#' + short_form(k).encode()],
       repr(list(mid)[:2])[:200])
    os.setxattr(M('w/h', short_form(k)), 'user.cellfs.name', k)
    added, removed, changed = delta(b, snap())
    ok('a directory named after it was filled: its rows move to the key', [x[1] for x in added] == [b'h#' + k] and
       list(added.values()) == [b'under'] and not removed and not changed, repr(list(added)[:2])[:200])
    ok('... and read back under its short form', read(M('w/h', short_form(k), 'cf', 'c')) == b'under')

    # rsync -X: the temporary file gets the name, then is renamed onto the short form
    q2 = b'r' * 300
    b = snap()
    tmp = os.path.join(d, '.' + short_form(q2) + '.Ab12Cd')
    write(tmp, b'via rsync')
    os.setxattr(tmp, 'user.cellfs.name', q2)
    os.rename(tmp, os.path.join(d, short_form(q2)))
    added, removed, changed = delta(b, snap())
    ok('rsync -X: a temporary file named, renamed onto the short form: one cell of those bytes',
       [k[3] for k in added] == [q2] and list(added.values()) == [b'via rsync'] and not removed and not changed,
       repr(list(added)[:2])[:200])
    write(tmp, b'no name')
    e = errno_of(os.rename, tmp, os.path.join(d, short_form(b's' * 300)))
    ok('a rename onto a short form with no whole name given: ENAMETOOLONG', e == errno.ENAMETOOLONG, ename(e))
    os.unlink(tmp)


@scenario
def mkdir_rmdir_refused():
    expect_err('mkdir in a family directory', errno.EPERM, os.mkdir, M('w/h/dup/cf/sub'))
    expect_err('a file at the top', errno.EPERM, write, M('topfile'), b'x')
    expect_err('a file in a table directory', errno.EPERM, write, M('w/file'), b'x')
    expect_err('a file in a first-level key directory (no row above)', errno.EPERM, write, M('w/h/file'), b'x')
    os.makedirs(M('w/bad/r/9bad+'))
    expect_err('a file in a directory whose name is not a family name (9bad+)', errno.EINVAL, write,
               M('w/bad/r/9bad+/q'), b'x')
    os.makedirs(M('w/bad/r/' + 'f' * 65))
    expect_err('a file in a directory named with 65 characters (family names are 1..64)', errno.EINVAL, write,
               M('w/bad/r/' + 'f' * 65 + '/q'), b'x')
    HELD.extend(['w/bad', 'w/bad/r', 'w/bad/r/9bad+'])
    d = M('w/h/dup/cf')
    for bad, why in (('a%2fb', 'lower-case hex'), ('%zz', 'junk after %'), ('%61', 'a needless escape'),
                     ('a%', 'a lone %'), ('%2', 'a short escape'), ('a@b', 'an unescaped @ without a timestamp'),
                     ('a%40b@', 'an empty timestamp')):
        expect_err('create %s (%s)' % (bad, why), errno.EINVAL, write, os.path.join(d, bad), b'x')
    for bad, why in (('x%2fy', 'lower-case hex'), ('%zz', 'junk after %'), ('%2B', 'a needless escape (+)'),
                     ('a%2B', 'a needless escape after the first byte'),
                     ('a#b', 'the delimiter in a segment'), ('a%23b', 'an escaped delimiter')):
        expect_err('mkdir %s (%s)' % (bad, why), errno.EINVAL, os.mkdir, M('w/h', bad))
    # A key segment named like a family the table does not have, escaped as rule 4 escapes a family's name
    # (a backup restored in any order meets it before the family): the escape says the name is a family's,
    # so the family is made, and the directory is the segment. (No row key of w has a segment y: with one,
    # making y would rename it, and that is refused: write.sh.)
    b = snap()
    e = errno_of(os.mkdir, M('w/h', '%79'))
    ok('mkdir %79 (the escape of a family-like name): succeeds', e == 0, ename(e))
    a = snap()
    ok('mkdir %79: makes family y (GC never), nothing else', a.fams.get(('w', 'y')) == b'never' and
       not delta(b, a)[0] and not delta(b, a)[1], str(a.fams.get(('w', 'y'))))
    os.rmdir(M('w/h', '%79'))
    os.removexattr(M('w'), 'user.cellfs.family.y')  # (empty: removing its attribute deletes it)
    ok('... family y removed again', ('w', 'y') not in snap().fams)
    expect_err('a short-form name (%~HASH: a qualifier too long to spell) created and closed before its whole name '
               '(user.cellfs.name) came', errno.ENAMETOOLONG, write, os.path.join(d, 'a' * 200 + '%~0123456789ABCDEF'),
               b'x')
    expect_err('a 256-byte name on create', errno.ENAMETOOLONG, write, os.path.join(d, 'n' * 256), b'x')
    expect_err('a 256-byte name on mkdir', errno.ENAMETOOLONG, os.mkdir, M('w/h', 'n' * 256))
    # row keys up to 4096 bytes: directories made fd-relative (paths past PATH_MAX)
    b = snap()
    fd = os.open(M('deep'), os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(32):  # 32 segments of 127: a 4095-byte key (more than 24 levels: see mountcheck's names)
            name = ('L' if i == 0 else 'k') * 127
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        # (a name that cannot be a family's: one that can is the row's new family, see below)
        expect_err('mkdir making a 4097-byte row key', errno.ENAMETOOLONG, os.mkdir, 'z+', dir_fd=fd)
        e = errno_of(os.mkdir, 'cf', dir_fd=fd)
        ok('mkdir of a family directory under a 4095-byte key: succeeds', e == 0, ename(e))
        e = errno_of(write, 'cf/q', b'long', dir_fd=fd)
        ok('a file under a 4095-byte row key: written', e == 0, ename(e))
        key = b'#'.join([b'L' * 127] + [b'k' * 127] * 31)
        a = snap()
        ad, rm, ch = delta(b, a)
        ok('... one cell, row key the 4095 bytes', [(k[0], k[1], k[2], k[3], v) for k, v in ad.items()] ==
           [('deep', key, 'cf', b'q', b'long')] and not rm and not ch, describe(b, a))
        # a new family under that row: mkdir F must be allowed (row P is 4095 bytes, F is a family)
        b = snap()
        e = errno_of(os.mkdir, 'nf', dir_fd=fd)
        ok('mkdir of a new family directory under a 4095-byte row key: succeeds (row P, family F)', e == 0,
           ename(e))
        if e == 0:
            e = errno_of(write, 'nf/q', b'nf', dir_fd=fd)
            ok('a file in a new family under a 4095-byte row key: written', e == 0, ename(e))
        fd2 = os.open('cf', os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = fd2
        expect_err('mkdir in a family directory of a 4095-byte row', errno.EPERM, os.mkdir, 'sub', dir_fd=fd)
    finally:
        os.close(fd)
    # renaming the first segment lengthens every key under it: to 4096 bytes moves, to 4097 is refused
    b = snap()
    os.rename(M('deep', 'L' * 127), M('deep', 'L' * 128))
    a = snap()
    ad, rm, ch = delta(b, a)
    ok('rename of a key directory making a row key of exactly 4096 bytes: moved',
       ad and all(len(k[1]) == 4096 for k in ad) and sorted(k[2:] for k in ad) == sorted(k[2:] for k in rm) and
       not ch, describe(b, a))
    expect_err('rename of a key directory making a row key of 4097 bytes', errno.ENAMETOOLONG, os.rename,
               M('deep', 'L' * 128), M('deep', 'L' * 129))
    expect_err('rmdir of a key directory holding rows', errno.ENOTEMPTY, os.rmdir, M('w/h'))
    expect_err('rmdir of a row directory', errno.ENOTEMPTY, os.rmdir, M('w/h/dup'))
    expect_err('rmdir of a family directory holding cells', errno.ENOTEMPTY, os.rmdir, M('w/h/dup/cf'))
    expect_err('rmdir of a table with rows', errno.ENOTEMPTY, os.rmdir, M('full'))
    expect_err('rmdir of a file', errno.ENOTDIR, os.rmdir, M('w/h/dup/cf/q'))
    expect_err('rmdir of a name that is not there', errno.ENOENT, os.rmdir, M('w/nothere'))
    expect_err('rmdir of a table that is not there', errno.ENOENT, os.rmdir, M('nothere'))
    b = snap()
    e = errno_of(os.rmdir, M('e1'))
    a = snap()
    ok('rmdir of an empty table: succeeds', e == 0, ename(e))
    ok('rmdir of an empty table: the table and its families dropped, nothing else',
       set(b.tables) - set(a.tables) == {'e1'} and set(a.tables) < set(b.tables) and
       {k for k in b.fams if k[0] == 'e1'} == set(b.fams) - set(a.fams) and set(a.fams) < set(b.fams) and
       a.cells == b.cells, describe(b, a))
    ok('rmdir of an empty table: no longer listed', 'e1' not in listdir(MNT))


@scenario
def links_and_special_files():
    d = M('w/h/dup/cf')
    expect_err('symlink', errno.EPERM, os.symlink, 'q', d + '/sym')
    expect_err('symlink in a key directory', errno.EPERM, os.symlink, 'q', M('w/h/sym'))
    expect_err('hard link', errno.EPERM, os.link, d + '/q', d + '/hard')
    expect_err('mkfifo', errno.EPERM, os.mkfifo, d + '/fifo')
    expect_err('mknod (character device)', errno.EPERM, mknod, d + '/dev', S.S_IFCHR | 0o644)
    expect_err('mknod (socket)', errno.EPERM, mknod, d + '/sock', S.S_IFSOCK | 0o644)


@scenario
def names():
    """Escaped names on create and mkdir: the bytes they stand for."""
    fams = [b'cf', b'k1']
    b = snap()
    segs = [b'cf', b'', b'a/b', b'.', b'caf\xc3\xa9', b'x%y']
    path = ['w'] + [encode(s, families=fams).decode() for s in segs] + ['cf']
    os.makedirs(M(*path))
    quals = [b'a/b', b'x@y', b'', b'%', b'..', b'tab\tnl\n', b'\xff\x00']
    for q in quals:
        write(M(*path, encode(q, qual=True).decode('utf-8', 'surrogateescape')), q + b'!')
    a = snap()
    row = b'#'.join(segs)
    ad, rm, ch = delta(b, a)
    ok('escaped key segments (a family\'s name, empty, /, ., UTF-8, %) and qualifiers (/ @ empty % .. '
       'controls 0xFF NUL): the bytes they stand for', {(k[1], k[2], k[3], v) for k, v in ad.items()} ==
       {(row, 'cf', q, q + b'!') for q in quals} and not rm and not ch, describe(b, a))
    got = sorted(os.fsencode(n) for n in os.listdir(M(*path)))
    ok('... and listed under the same names', got == sorted(encode(q, qual=True) for q in quals), str(got))
    b = snap()
    write(M(*path, version_name(b'x@y', 77).decode()), b'77')
    expect('the version name of a qualifier with @ (x%40y@TS)', b, snap(), added={('w', row, 'cf', b'x@y', 77): b'77'})


@scenario
def renames():
    d = M('w/rn')
    b = snap()
    os.rename(d + '/src/cf/s', d + '/dst/cf/d')
    expect('rename file onto an existing file: every cell of the source at its timestamp, the target\'s newer '
           'cell removed, the source column deleted', b, snap(),
           added={('w', b'rn#dst', 'cf', b'd', T0): b's1', ('w', b'rn#dst', 'cf', b'd', T0 + 1000): b's2'},
           removed=[('w', b'rn#src', 'cf', b's', T0), ('w', b'rn#src', 'cf', b's', T0 + 1000),
                    ('w', b'rn#dst', 'cf', b'd', T0 + 500000)])
    ok('rename: the target reads what the source read', read(d + '/dst/cf/d') == b's2')
    ok('rename: the source is gone', listdir(d + '/src/cf') == ['t'], str(listdir(d + '/src/cf')))
    ok('rename: the source\'s older cell and the target\'s are listed under the target',
       listdir(d + '/dst/cf') == ['d', 'd@%016d' % (T0 - 1000), 'd@%016d' % T0], str(listdir(d + '/dst/cf')))
    expect_err('rename into a directory that is not there', errno.ENOENT, os.rename, d + '/src/cf/t',
               d + '/new/row/fresh/t2')
    os.makedirs(d + '/new/row/fresh')
    b = snap()
    os.rename(d + '/src/cf/t', d + '/new/row/fresh/t2')
    a = snap()
    expect('rename onto another row and a new family (made with mkdir): the cell moves, family created', b, a,
           added={('w', b'rn#new#row', 'fresh', b't2', T0): b't1'}, removed=[('w', b'rn#src', 'cf', b't', T0)],
           schema=False)
    ok('... family fresh created, GC never', a.fams.get(('w', 'fresh')) == b'never')
    ok('rename of the last file of a row: the emptied directories stay',
       listdir(d + '/src') == ['cf'] and listdir(d + '/src/cf') == [], '%s %s' % (listdir(d + '/src'),
                                                                                 listdir(d + '/src/cf')))
    HELD.extend(['w/rn/src', 'w/rn/src/cf'])
    # onto a Q@TS name
    b = snap()
    os.rename(d + '/dst/cf/d@%016d' % (T0 - 1000), d + '/dst/cf/e@%016d' % 42)
    expect('rename of q@TS onto r@TS: that one cell moves to the other column at TS', b, snap(),
           added={('w', b'rn#dst', 'cf', b'e', 42): b'd0'}, removed=[('w', b'rn#dst', 'cf', b'd', T0 - 1000)])
    b = snap()
    os.rename(d + '/ver/cf/v', d + '/ver/cf/w@%016d' % 7)
    expect('rename of a bare name onto r@TS: its newest cell at TS, its column gone', b, snap(),
           added={('w', b'rn#ver', 'cf', b'w', 7): b'v2'},
           removed=[('w', b'rn#ver', 'cf', b'v', T0), ('w', b'rn#ver', 'cf', b'v', T0 + 1000)])
    b = snap()
    os.rename(d + '/self/cf/q', d + '/self/cf/q@%016d' % T0)
    same('rename of q onto its own newest q@TS: nothing to do', b, snap())
    ok('... q still there', read(d + '/self/cf/q') == b'self')
    expect_err('rename of a file that is not there', errno.ENOENT, os.rename, d + '/self/cf/none', d + '/self/cf/x')
    expect_err('RENAME_NOREPLACE onto an existing file', errno.EEXIST, renameat2, d + '/dst/cf/d', d + '/self/cf/q',
               RENAME_NOREPLACE)
    expect_err('RENAME_EXCHANGE of two files', errno.EINVAL, renameat2, d + '/dst/cf/d', d + '/self/cf/q',
               RENAME_EXCHANGE)
    expect_err('RENAME_EXCHANGE of two directories', errno.EINVAL, renameat2, M('w/mv/a'), M('w/mv/full'),
               RENAME_EXCHANGE)
    expect_err('rename of a file to another table', errno.EXDEV, os.rename, d + '/self/cf/q', M('w2/x/cf/moved'))
    expect_err('rename of a key directory to another table', errno.EXDEV, os.rename, M('w/mv/full'), M('w2/full'))
    expect_err('rename of a file onto a directory', errno.EISDIR, os.rename, d + '/self/cf/q', d + '/dst/cf')
    expect_err('rename of a directory onto a file', errno.ENOTDIR, os.rename, M('w/mv/full'), d + '/self/cf/q')
    expect_err('rename of a file into a table directory', errno.EPERM, os.rename, d + '/self/cf/q', M('w/q'))
    expect_err('rename of a file into a first-level key directory', errno.EPERM, os.rename, d + '/self/cf/q',
               M('w/rn/q'))
    expect_err('rename of a file to the top', (errno.EPERM, errno.EXDEV), os.rename, d + '/self/cf/q', M('q'))
    expect_err('rename of a file to a non-canonical name', errno.EINVAL, os.rename, d + '/self/cf/q',
               d + '/self/cf/%zz')
    expect_err('rename of a family directory', errno.EXDEV, os.rename, M('w/fam/r/cf'), M('w/fam/r/cf2'))
    expect_err('rename of a key directory into itself', errno.EINVAL, os.rename, M('w/mv/a'), M('w/mv/a/1/x'))


def gone_soon(path, limit=60):
    """PATH is ENOENT within LIMIT seconds (the daemon has the kernel forget a name after the request that
    removed it: watch_inval_later), polled."""
    end = time.monotonic() + limit
    while errno_of(os.stat, path) != errno.ENOENT:
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@scenario
def rename_replaces():
    """mv a b carries every cell of a, each at its timestamp (b's cell at the same timestamp replaced), and
    b then reads what a read: b's cells newer than a's newest go in the same transaction, its older ones stay
    as b@TS (fs/CONTRACT.md, "Renames"). A handle that wrote a file and is then given an older time (cp -a)
    replaces it the same way; touch -d of a bare name below one of its own versions is EINVAL."""
    cb = lambda row, q, ts: ('w', row, 'cf', q, ts)  # noqa: E731
    newer = M('w/rv/b/cf/b@%016d' % (T0 + 500000))
    ok('b\'s newest is reachable as b@TS (the kernel caches the entry)', errno_of(os.stat, newer) == 0)
    b = snap()
    e = errno_of(os.rename, M('w/rv/a/cf/a'), M('w/rv/b/cf/b'))
    ok('rename of a column with older versions onto another row\'s column: succeeds', e == 0, ename(e))
    expect('... every cell of a moved at its timestamp, b\'s cell at the same timestamp replaced, b\'s newer '
           'cell removed, its older one kept', b, snap(),
           added={cb(b'rv#b', b'b', T0): b'a1', cb(b'rv#b', b'b', T0 + 2000): b'a3'},
           changed={cb(b'rv#b', b'b', T0 + 1000): b'a2'},
           removed=[cb(b'rv#a', b'a', T0), cb(b'rv#a', b'a', T0 + 1000), cb(b'rv#a', b'a', T0 + 2000),
                    cb(b'rv#b', b'b', T0 + 500000)])
    sees('... b reads a\'s newest at its time', M('w/rv/b/cf/b'), b'a3', T0 + 2000)
    want = sorted(['b'] + ['b@%016d' % t for t in (T0 - 5000, T0, T0 + 1000)])
    ok('... b lists a\'s older versions and its own older one', listdir(M('w/rv/b/cf')) == want,
       '%s, want %s' % (listdir(M('w/rv/b/cf')), want))
    ok('... a is gone', listdir(M('w/rv/a/cf')) == [], str(listdir(M('w/rv/a/cf'))))
    ok('... the removed newer cell\'s name is forgotten by the kernel: ENOENT (within 60 s)',
       gone_soon(newer), ename(errno_of(os.stat, newer)))
    HELD.extend(['w/rv/a', 'w/rv/a/cf'])
    b = snap()
    sh_ok('mv of a column onto another of the same row', 'mv w/rv/c/cf/c w/rv/c/cf/d')
    expect('... every cell moved, the target\'s newer cell removed, its older one kept', b, snap(),
           added={cb(b'rv#c', b'd', T0): b'c1', cb(b'rv#c', b'd', T0 + 1000): b'c2'},
           removed=[cb(b'rv#c', b'c', T0), cb(b'rv#c', b'c', T0 + 1000), cb(b'rv#c', b'd', T0 + 900000)])
    sees('... d reads c\'s newest', M('w/rv/c/cf/d'), b'c2', T0 + 1000)
    b = snap()
    os.rename(M('w/rv/v/cf/q@%016d' % (T0 + 1000)), M('w/rv/v/cf/q'))
    expect('rename of q@TS onto q: q reads that version, the newer cell removed, the older kept', b, snap(),
           removed=[cb(b'rv#v', b'q', T0 + 2000)])
    sees('... q reads it', M('w/rv/v/cf/q'), b'q2', T0 + 1000)
    # the extremes of time: cells at 0 and at the largest timestamp move too
    write(M('w/rv/e/cf/e@9223372036854775807'), b'emax')
    b = snap()
    os.rename(M('w/rv/e/cf/e'), M('w/rv/b/cf/e'))
    expect('rename of a column with cells at timestamps 0, 1000 and 2^63-1: every one moved', b, snap(),
           added={cb(b'rv#b', b'e', 0): b'e0', cb(b'rv#b', b'e', 1000): b'e1', cb(b'rv#b', b'e', 2**63 - 1): b'emax'},
           removed=[cb(b'rv#e', b'e', 0), cb(b'rv#e', b'e', 1000), cb(b'rv#e', b'e', 2**63 - 1)])
    HELD.extend(['w/rv/e', 'w/rv/e/cf'])
    # the shell: an older file renamed onto a newer one
    os.makedirs(M('w/rv/sh/cf'))
    b = snap()
    sh_ok('echo AAAA > a1; echo BBBB > b1; touch -d @1577836800 a1; mv a1 b1',
          'cd w/rv/sh/cf && echo AAAA > a1 && echo BBBB > b1 && touch -d @1577836800 a1 && mv a1 b1')
    a = snap()
    ok('... b1 holds only AAAA at 2020-01-01, a1 and BBBB are gone',
       {k: v for k, v in a.cells.items() if k[:2] == ('w', b'rv#sh')} ==
       {cb(b'rv#sh', b'b1', 1577836800000000): b'AAAA\n'}, describe(b, a))
    sees('... b1 reads AAAA', M('w/rv/sh/cf/b1'), b'AAAA\n', 1577836800000000)
    ok('... a1 is gone', listdir(M('w/rv/sh/cf')) == ['b1'], str(listdir(M('w/rv/sh/cf'))))
    # cp -a of an older file over a newer one: the handle that wrote it is given the older time
    src = os.path.join(WORK, 'older-src')
    with open(src, 'wb') as f:
        f.write(b'CCCC\n')
    os.utime(src, ns=(0, 1577836800500000000))
    write(M('w/rv/sh/cf/b2@%016d' % T0), b'old')
    write(M('w/rv/sh/cf/b2'), b'BBBB\n')
    b = snap()
    newest = max(b.column('w', b'rv#sh', 'cf', b'b2'))
    newer = M('w/rv/sh/cf/b2@%016d' % newest)
    os.stat(newer)
    sh_ok('cp -a of an older file over a newer one', 'cp -a %s w/rv/sh/cf/b2' % src)
    ok('... the removed newer cell\'s name is forgotten by the kernel: ENOENT (within 60 s)',
       gone_soon(newer), ename(errno_of(os.stat, newer)))
    expect('... the file reads it at its time, the newer cell removed, the older kept', b, snap(),
           added={cb(b'rv#sh', b'b2', 1577836800500000): b'CCCC\n'}, removed=[cb(b'rv#sh', b'b2', newest)])
    sees('... b2 reads it', M('w/rv/sh/cf/b2'), b'CCCC\n', 1577836800500000)
    # the same with futimens at the time of another cell: that cell is replaced
    b = snap()
    fd = os.open(M('w/rv/sh/cf/b2'), os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, b'DDDD')
        os.utime(fd, ns=(0, T0 * 1000))
    finally:
        os.close(fd)
    expect('write and futimens onto the time of an older cell: that cell replaced, the newer removed', b, snap(),
           changed={cb(b'rv#sh', b'b2', T0): b'DDDD'}, removed=[cb(b'rv#sh', b'b2', 1577836800500000)])
    # a whole second with a newer cell inside it: the time may have been rounded (GNU tar): refused
    write(M('w/rv/sh/cf/b3@%016d' % (1577836800300000)), b'in the second')
    write(M('w/rv/sh/cf/b3'), b'newest')
    b = snap()
    fd = os.open(M('w/rv/sh/cf/b3'), os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b'rounded')
    os.utime(fd, ns=(0, 1577836800 * 10**9))
    e = errno_of(os.close, fd)
    ok('write and futimens to a whole second below a cell within that second: close() is EINVAL',
       e == errno.EINVAL, ename(e))
    same('... nothing written', b, snap())
    # touch -d of a bare name not written in that open, below one of its versions: EINVAL
    expect_err('touch -d of a bare name below one of its own versions', errno.EINVAL, os.utime, M('w/rv/t/cf/r'),
               ns=(0, (T0 - 500) * 1000))


@scenario
def rename_onto_open_file():
    """A file replaced by a rename while a handle has it open for writing: the handle writes nothing back
    (as after unlink), whether the file was in the store, new, or the renamed file was new."""
    d = M('w/ro/r/cf')
    os.makedirs(d)
    write(d + '/zb', b'zb old')
    write(d + '/zc', b'zc')
    b = snap()
    tsc = max(b.column('w', b'ro#r', 'cf', b'zc'))
    fd = os.open(d + '/zb', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'REPLACED')
        e = errno_of(os.rename, d + '/zc', d + '/zb')
        ok('rename onto a file open for writing: succeeds', e == 0, ename(e))
        st = os.fstat(fd)
        ok('... fstat of the replaced handle: nlink 0', st.st_nlink == 0, 'nlink %d' % st.st_nlink)
    finally:
        e = errno_of(os.close, fd)
    ok('... its close succeeds', e == 0, ename(e))
    a = snap()
    want = {t: v for t, v in b.column('w', b'ro#r', 'cf', b'zb').items() if t < tsc}  # (zb's older cell stays)
    want[tsc] = b'zc'
    ok('... the handle wrote nothing back: zb is zc\'s cell and its own older one',
       a.column('w', b'ro#r', 'cf', b'zb') == want and not a.column('w', b'ro#r', 'cf', b'zc') and
       b'REPLACED' not in a.cells.values(), describe(b, a))
    sees('... zb reads zc\'s content', d + '/zb', b'zc', tsc)
    # the file open for writing is new (never written back)
    write(d + '/zd', b'zd')
    b = snap()
    tsd = max(b.column('w', b'ro#r', 'cf', b'zd'))
    fd = os.open(d + '/zn', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'REPLACED')
        os.rename(d + '/zd', d + '/zn')
    finally:
        e = errno_of(os.close, fd)
    ok('rename onto a new file open for writing, then close: succeeds', e == 0, ename(e))
    expect('... the new file\'s handle wrote nothing back', b, snap(),
           added={('w', b'ro#r', 'cf', b'zn', tsd): b'zd'}, removed=[('w', b'ro#r', 'cf', b'zd', tsd)])
    sees('... zn reads zd\'s content', d + '/zn', b'zd', tsd)
    # a new file renamed onto a file of the store open for writing
    write(d + '/ze', b'ze old')
    b = snap()
    fw = os.open(d + '/ze', os.O_WRONLY)
    fn = os.open(d + '/ze.tmp', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fw, b'REPLACED')
        os.write(fn, b'winner')
        os.rename(d + '/ze.tmp', d + '/ze')
        t0 = now_us()
    finally:
        os.close(fn)
        e = errno_of(os.close, fw)
    ok('a new file renamed onto a file open for writing: the replaced handle\'s close succeeds', e == 0, ename(e))
    new_cell('... only the renamed file is written back', b, snap(), 'w', b'ro#r', 'cf', b'ze', b'winner', t0,
             now_us())


@scenario
def reopen_new_file():
    """A file created and not written back yet opens for reading by name, with what its writer has written
    so far (Python's NamedTemporaryFile reopened by name)."""
    d = M('w/nt/r/cf')
    os.makedirs(d)
    b = snap()
    try:
        with tempfile.NamedTemporaryFile(dir=d) as f:
            f.write(b'so far')
            f.flush()
            try:
                with open(f.name, 'rb') as g:
                    got = g.read()
            except OSError as e:
                got = 'error %s' % ename(e.errno)
            ok('NamedTemporaryFile reopened by name: reads what was written so far', got == b'so far', short(got))
    except OSError as e:
        ok('NamedTemporaryFile: works', False, str(e))
    same('NamedTemporaryFile: nothing written back', b, snap())
    fd = os.open(d + '/n', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'abc')
        try:
            r = os.open(d + '/n', os.O_RDONLY)
            try:
                os.write(fd, b'def')
                got = os.read(r, 100)
            finally:
                os.close(r)
        except OSError as e:
            got = 'error %s' % ename(e.errno)
        ok('open(O_RDONLY) of a new file: reads a copy of what was written before it opened', got == b'abc',
           short(got))
        t0 = now_us()
    finally:
        os.close(fd)
    new_cell('... the writer\'s close writes back all it wrote', b, snap(), 'w', b'nt#r', 'cf', b'n', b'abcdef', t0,
             now_us())
    b = snap()
    fd = os.open(d + '/m', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'first ')
        try:
            with open(d + '/m', 'ab') as g:
                g.write(b'appended')
            e = 0
        except OSError as x:
            e = x.errno
        ok('open(O_APPEND) of a new file by name: succeeds', e == 0, ename(e))
        a = snap()
        ok('... its close writes back what the writer had written, and its own', [v for k, v in delta(b, a)[0].items()
           if k[3] == b'm'] == [b'first appended'], describe(b, a))
    finally:
        os.close(fd)


@scenario
def rename_open_handle():
    """A file renamed while a handle writes it: the later write-back goes to the new name."""
    os.makedirs(M('w/rn/open/cf'))
    b = snap()
    fd = os.open(M('w/rn/open/cf/tmp'), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'abc')
        os.fsync(fd)
        e = errno_of(os.rename, M('w/rn/open/cf/tmp'), M('w/rn/open/cf/final'))
        ok('rename of a file open for writing (after fsync): succeeds', e == 0, ename(e))
        os.write(fd, b'def')
    finally:
        os.close(fd)
    a = snap()
    ad, rm, ch = delta(b, a)
    ok('... the write-back after the rename goes to the new name, one version, the old name gone',
       [(k[3], v) for k, v in ad.items()] == [(b'final', b'abcdef')] and not rm and not ch, describe(b, a))


@scenario
def open_new_files_removed():
    """A file created and not yet written back (only its handle holds it) can be unlinked and renamed, as
    POSIX says: unlink removes the name, the handle goes on working and nothing is written back; rename
    moves it, and its write-back lands under the new name."""
    d = M('w/on/r/cf')
    os.makedirs(d)
    b = snap()
    fd = os.open(d + '/n', os.O_RDWR | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'abc')
        e = errno_of(os.unlink, d + '/n')
        ok('unlink of a new file still open (never flushed): succeeds', e == 0, ename(e))
        ok('... no longer listed', 'n' not in listdir(d), str(listdir(d)))
        e = errno_of(os.stat, d + '/n')
        ok('... stat of its name: ENOENT', e == errno.ENOENT, ename(e))
        st = os.fstat(fd)
        ok('... fstat on the handle: size 3, nlink 0', (st.st_size, st.st_nlink) == (3, 0),
           'size %d nlink %d' % (st.st_size, st.st_nlink))
        os.write(fd, b'def')
        got = os.pread(fd, 100, 0)
        ok('... the handle still writes and reads its copy', got == b'abcdef', short(got))
    finally:
        os.close(fd)
    same('unlink of a new open file, then close: nothing written back', b, snap())
    ok('... and it does not come back at close', 'n' not in listdir(d), str(listdir(d)))
    b = snap()
    try:
        with tempfile.TemporaryFile(dir=d) as f:  # (mkstemp, then unlink: FUSE has no O_TMPFILE)
            f.write(b'scratch')
            f.seek(0)
            got = f.read()
        ok('tempfile.TemporaryFile in a family directory: writes and reads back', got == b'scratch', short(got))
    except OSError as e:
        ok('tempfile.TemporaryFile in a family directory: works', False, str(e))
    same('tempfile.TemporaryFile: nothing written back', b, snap())
    ok('... nothing left in the directory', listdir(d) == [], str(listdir(d)))
    # rename of a new file before its first write-back: the write-back goes to the new name
    b = snap()
    fd = os.open(d + '/a.tmp', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'moved')
        e = errno_of(os.rename, d + '/a.tmp', d + '/a')
        ok('rename of a new file still open (never flushed): succeeds', e == 0, ename(e))
        ok('... listed under the new name only', listdir(d) == ['a'], str(listdir(d)))
        e = errno_of(os.stat, d + '/a.tmp')
        ok('... the old name: ENOENT', e == errno.ENOENT, ename(e))
        ok('... stat of the new name: the handle\'s size', os.stat(d + '/a').st_size == 5)
        t0 = now_us()
    finally:
        os.close(fd)
    new_cell('rename of a new open file, then close: one cell under the new name', b, snap(), 'w', b'on#r', 'cf',
             b'a', b'moved', t0, now_us())
    # onto a column of the store: its write-back is the column's new version, as a rename of a stored file
    b = snap()
    fd = os.open(d + '/b.tmp', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'second')
        e = errno_of(renameat2, d + '/b.tmp', d + '/a', RENAME_NOREPLACE)
        ok('RENAME_NOREPLACE of a new open file onto an existing column: EEXIST', e == errno.EEXIST, ename(e))
        e = errno_of(os.rename, d + '/b.tmp', d + '/a')
        ok('rename of a new open file onto an existing column: succeeds', e == 0, ename(e))
        t0 = now_us()
    finally:
        os.close(fd)
    new_cell('... at close: a new version of the column, the old one kept', b, snap(), 'w', b'on#r', 'cf', b'a',
             b'second', t0, now_us())
    # onto another new file: that one is replaced (nothing of it is written back)
    b = snap()
    f1 = os.open(d + '/c', os.O_WRONLY | os.O_CREAT, 0o644)
    f2 = os.open(d + '/c.tmp', os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(f1, b'replaced')
        os.write(f2, b'winner')
        e = errno_of(os.rename, d + '/c.tmp', d + '/c')
        ok('rename of a new open file onto another new open file: succeeds', e == 0, ename(e))
        t0 = now_us()
    finally:
        os.close(f2)
        os.close(f1)
    new_cell('... only the renamed file is written back', b, snap(), 'w', b'on#r', 'cf', b'c', b'winner', t0,
             now_us())


@scenario
def open_files_removed():
    """A file open for reading and then removed reads and fstats as it was until its last close (POSIX)."""
    d = M('w/on/s/cf')
    os.makedirs(d)
    write(d + '/u', b'hello\n')
    ts = max(snap().column('w', b'on#s', 'cf', b'u'))
    fd = os.open(d + '/u', os.O_RDONLY)
    try:
        os.unlink(d + '/u')
        try:
            st = os.fstat(fd)
            ok('fstat of a file open for reading, after rm: its size and time, nlink 0',
               (st.st_size, st.st_mtime_ns, st.st_nlink) == (6, ts * 1000, 0),
               'size %d mtime %d nlink %d' % (st.st_size, st.st_mtime_ns, st.st_nlink))
        except OSError as e:
            ok('fstat of a file open for reading, after rm: succeeds', False, str(e))
        got = os.pread(fd, 100, 0)
        ok('read of a file open for reading, after rm: its value', got == b'hello\n', short(got))
    finally:
        os.close(fd)
    rc, out, err = sh('echo hello > w/on/s/cf/v; exec 3<w/on/s/cf/v; rm w/on/s/cf/v; cat <&3')
    ok('echo > v; exec 3<v; rm v; cat <&3: reads hello', (rc, out, err) == (0, b'hello\n', b''),
       'exit %d, out %r, err %r' % (rc, out, err[:300]))


@scenario
def rename_dirs():
    b = snap()
    os.rename(M('w/mv/a'), M('w/mv/b'))
    a = snap()
    moved = {k: v for k, v in b.cells.items() if k[1] == b'mv#a' or k[1].startswith(b'mv#a#')}
    expect('rename of a key directory: every row under it moved, cells identical, mv#ab untouched', b, a,
           added={(k[0], b'mv#b' + k[1][4:]) + k[2:]: v for k, v in moved.items()}, removed=list(moved))
    ok('... listed under the new name', 'b' in listdir(M('w/mv')) and 'a' not in listdir(M('w/mv')) and
       listdir(M('w/mv/b/1/2/k1')) == ['z'], str(listdir(M('w/mv'))))
    expect_err('rename of a key directory onto one holding rows', errno.ENOTEMPTY, os.rename, M('w/mv/b'),
               M('w/mv/full'))
    os.mkdir(M('w/mv/empty'))
    b = snap()
    e = errno_of(os.rename, M('w/mv/b'), M('w/mv/empty'))
    a = snap()
    ok('rename of a key directory onto an empty made directory: succeeds', e == 0, ename(e))
    moved = {k: v for k, v in b.cells.items() if k[1] == b'mv#b' or k[1].startswith(b'mv#b#')}
    expect('... the rows moved under it', b, a, added={(k[0], b'mv#empty' + k[1][4:]) + k[2:]: v
                                                       for k, v in moved.items()}, removed=list(moved))
    # rename(2)'s rules for directories: only an empty one is replaced
    os.mkdir(M('w/mv/e1'))
    expect_err('rename of an empty made directory onto a key directory holding rows', errno.ENOTEMPTY, os.rename,
               M('w/mv/e1'), M('w/mv/full'))
    ok('... both still there', os.path.isdir(M('w/mv/e1')) and read(M('w/mv/full/cf/x')) == b'full')
    os.makedirs(M('w/mv/e2/sub'))
    expect_err('rename of an empty made directory onto a made one holding a directory', errno.ENOTEMPTY, os.rename,
               M('w/mv/e1'), M('w/mv/e2'))
    os.makedirs(M('w/mv/e3/r/cf'))
    fd = os.open(M('w/mv/e3/r/cf/open'), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        expect_err('rename of an empty made directory onto a made one holding a file being written',
                   errno.ENOTEMPTY, os.rename, M('w/mv/e1'), M('w/mv/e3/r/cf'))
    finally:
        os.close(fd)
    os.mkdir(M('w/mv/e4'))
    e = errno_of(os.rename, M('w/mv/e1'), M('w/mv/e4'))
    ok('rename of an empty made directory onto an empty one: succeeds', e == 0, ename(e))
    ok('... the source gone, the target there', not os.path.exists(M('w/mv/e1')) and os.path.isdir(M('w/mv/e4')))
    expect_err('rename of a directory onto a file', errno.ENOTDIR, os.rename, M('w/mv/e4'), M('w/mv/full/cf/x'))
    expect_err('rename of a file onto a directory', errno.EISDIR, os.rename, M('w/mv/full/cf/x'), M('w/mv/e4'))
    b = snap()
    sh_ok('mv of a key directory', 'mv w/mv/empty w/mv/c')
    moved = {k: v for k, v in b.cells.items() if k[1] == b'mv#empty' or k[1].startswith(b'mv#empty#')}
    expect('mv of a key directory to a deeper new name', b, snap(),
           added={(k[0], b'mv#c' + k[1][8:]) + k[2:]: v for k, v in moved.items()}, removed=list(moved))
    # a family directory: EXDEV, so mv copies (every version, at its timestamp) and removes
    b = snap()
    sh_ok('mv of a family directory', 'mv w/fam/r/cf w/fam/r/cg')
    a = snap()
    expect('mv of a family directory (EXDEV: mv copies): the column with every version at its timestamp', b, a,
           added={('w', b'fam#r', 'cg', b'x', T0): b'x'}, removed=[('w', b'fam#r', 'cf', b'x', T0)], schema=False)
    # tables
    b = snap()
    os.rename(M('ren'), M('renamed'))
    a = snap()
    ok('rename at the top: the table renamed, its families (and GC policies) and cells kept',
       set(b.tables) - set(a.tables) == {'ren'} and set(a.tables) - set(b.tables) == {'renamed'} and
       a.tables['renamed'][0] == b.tables['ren'][0] and
       {(k[1], v) for k, v in a.fams.items() if k[0] == 'renamed'} == {(k[1], v) for k, v in b.fams.items()
                                                                        if k[0] == 'ren'} and
       {k[1:]: v for k, v in a.cells.items() if k[0] == 'renamed'} == {k[1:]: v for k, v in b.cells.items()
                                                                          if k[0] == 'ren'} and
       len(a.cells) == len(b.cells), describe(b, a))
    ok('... listed under its new name', 'renamed' in listdir(MNT) and 'ren' not in listdir(MNT) and
       read(M('renamed/a/b/cf/q')) == b'ren')
    expect_err('rename of a table onto a table with rows', (errno.ENOTEMPTY, errno.EEXIST), os.rename, M('renamed'),
               M('ren2'))
    expect_err('RENAME_NOREPLACE of a table onto an existing table', errno.EEXIST, renameat2, M('renamed'), M('ren2'),
               RENAME_NOREPLACE)
    expect_err('rename of a table to a bad table name', errno.EINVAL, os.rename, M('renamed'), M('bad name'))
    expect_err('rename of a table into a table', errno.EXDEV, os.rename, M('renamed'), M('ren2/x'))
    b = snap()
    e = errno_of(os.rename, M('ren2'), M('ren3'))
    a = snap()
    ok('rename of a table onto an empty table (rename(2) replaces an empty directory): succeeds', e == 0, ename(e))
    if e == 0:
        ok('... ren3 is ren2 now', 'ren2' not in a.tables and {k[1:]: v for k, v in a.cells.items() if k[0] == 'ren3'}
           == {k[1:]: v for k, v in b.cells.items() if k[0] == 'ren2'}, describe(b, a))


@scenario
def open_files_and_made_dirs():
    """A file created and still open (nothing flushed yet) is in its directory; made trees move with mv."""
    os.makedirs(M('w/op/r/cf'))
    fd = os.open(M('w/op/r/cf/new'), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b'x')
        ok('a file created and open for writing (not yet flushed): listed in its directory',
           'new' in listdir(M('w/op/r/cf')), str(listdir(M('w/op/r/cf'))))
        for p in ('w/op/r/cf', 'w/op/r', 'w/op'):
            expect_err('rmdir %s, holding a file open for writing (created, not yet flushed)' % p,
                       errno.ENOTEMPTY, os.rmdir, M(p))
    finally:
        os.close(fd)
    ok('... after close, the file is there, through the mount too', listdir(M('w/op/r/cf')) == ['new'],
       str(listdir(M('w/op/r/cf'))))
    # a tree made with mkdir -p (held by the daemon): rename is EXDEV, so mv copies it
    os.makedirs(M('w/pt/a/b'))
    b = snap()
    sh_ok('mv of a tree made with mkdir -p', 'mv w/pt w/pt2')
    ok('mv of a tree made with mkdir -p: there under the new name, gone under the old',
       listdir(M('w/pt2/a')) == ['b'] and 'pt' not in listdir(M('w')), '%s %s' % (listdir(M('w/pt2')),
                                                                               'pt' in listdir(M('w'))))
    same('mv of a tree made with mkdir -p', b, snap())
    HELD.extend(['w/pt2', 'w/pt2/a', 'w/pt2/a/b'])
    # a file moved into directories made with mkdir: the row is made (under w/op2: w/op may be a negative
    # entry in the kernel after the rmdir above wrongly succeeded)
    os.makedirs(M('w/op2/src/cf'))
    write(M('w/op2/src/cf/f'), b'x')
    os.makedirs(M('w/op2/made/cf'))
    b = snap()
    os.rename(M('w/op2/src/cf/f'), M('w/op2/made/cf/moved'))
    a = snap()
    ad, rm, ch = delta(b, a)
    ok('rename into directories made with mkdir: the cell in the new row, at its timestamp',
       [(k[1], k[3], k[4], v) for k, v in ad.items()] == [(b'op2#made', b'moved', next(iter(rm))[4] if rm else 0,
                                                           b'x')] and len(rm) == 1 and not ch, describe(b, a))


@scenario
def rename_tools():
    """rsync's temporary file and rename, sed -i."""
    os.makedirs(M('w/rs/r/cf'))
    src = os.path.join(WORK, 'rsync-src')
    with open(src, 'wb') as f:
        f.write(b'synced\n')
    os.utime(src, ns=(0, 1426535612111222000))
    b = snap()
    sh_ok('rsync -a file', 'rsync -a %s w/rs/r/cf/q' % src)
    expect('rsync -a of a file (temp file, times, rename): one cell at its mtime, no temp file left', b, snap(),
           added={('w', b'rs#r', 'cf', b'q', 1426535612111222): b'synced\n'})
    with open(src, 'wb') as f:
        f.write(b'synced again\n')
    os.utime(src, ns=(0, 1426535612333444000))
    b = snap()
    sh_ok('rsync -a file onto it', 'rsync -a %s w/rs/r/cf/q' % src)
    expect('rsync -a onto an existing column: a new version at the source\'s mtime', b, snap(),
           added={('w', b'rs#r', 'cf', b'q', 1426535612333444): b'synced again\n'})
    b = snap()
    t0 = now_us()
    sh_ok('sed -i', 'sed -i s/again/AGAIN/ w/rs/r/cf/q')
    new_cell('sed -i (a temporary file renamed over it): a new version', b, snap(), 'w', b'rs#r', 'cf', b'q',
             b'synced AGAIN\n', t0, now_us())
    ok('... no temporary file left', listdir(M('w/rs/r/cf')) == sorted(['q', 'q@%016d' % 1426535612333444,
                                                                        'q@%016d' % 1426535612111222]),
       str(listdir(M('w/rs/r/cf'))))


@scenario
def xattrs():
    t = M('xa')
    b = snap()
    os.setxattr(t, 'user.cellfs.family.nf', b'maxversions=2')
    a = snap()
    ok('setfattr user.cellfs.family.F=maxversions=2: family F created with that policy',
       set(a.fams.items()) - set(b.fams.items()) == {(('xa', 'nf'), b'maxversions=2')} and
       set(a.fams) > set(b.fams) and a.cells == b.cells, describe(b, a))
    ok('... getfattr shows it', os.getxattr(t, 'user.cellfs.family.nf') == b'maxversions=2')
    b = snap()
    sh_ok('setfattr maxversions=1', "setfattr -n user.cellfs.family.cf -v 'maxversions=1' xa")
    a = snap()
    ok('setfattr on an existing family: its policy changed; the older versions no longer read',
       a.fams[('xa', 'cf')] == b'maxversions=1' and
       a.column('xa', b'r', 'cf', b'q') == {T0 + 2000: b'c'} and len(a.cells) == len(b.cells) - 2,
       describe(b, a))
    b = snap()
    os.setxattr(t, 'user.cellfs.family.cf', b'maxage=1d or maxversions=3')
    a = snap()
    ok('setfattr with a combined policy: stored canonically, getfattr shows the same',
       a.fams[('xa', 'cf')] == os.getxattr(t, 'user.cellfs.family.cf') and a.fams[('xa', 'cf')] != b'maxversions=1',
       '%s / %s' % (a.fams[('xa', 'cf')], os.getxattr(t, 'user.cellfs.family.cf')))
    for bad in (b'maxversions=x', b'', b'sometimes', b'maxage=3y', b'never\x00'):
        expect_err('setfattr family policy %r' % bad, errno.EINVAL, os.setxattr, t, 'user.cellfs.family.cf', bad)
        expect_err('setfattr new family with policy %r' % bad, errno.EINVAL, os.setxattr, t,
                   'user.cellfs.family.nf2', bad)
    expect_err('setfattr of a family with an invalid name', errno.EINVAL, os.setxattr, t,
               'user.cellfs.family.9bad+', b'never')
    expect_err('setfattr XATTR_CREATE on an existing family', errno.EEXIST, os.setxattr, t,
               'user.cellfs.family.cf', b'never', os.XATTR_CREATE)
    expect_err('setfattr XATTR_REPLACE on a family that is not there', errno.ENODATA, os.setxattr, t,
               'user.cellfs.family.nothere', b'never', os.XATTR_REPLACE)
    expect_err('removexattr of a family holding cells', errno.ENOTEMPTY, os.removexattr, t, 'user.cellfs.family.full')
    b = snap()
    sh_ok('setfattr -x', 'setfattr -x user.cellfs.family.gone xa')
    a = snap()
    ok('removexattr of an empty family: the family deleted, nothing else',
       set(b.fams) - set(a.fams) == {('xa', 'gone')} and set(a.fams) < set(b.fams) and a.cells == b.cells,
       describe(b, a))
    expect_err('removexattr of a family that is not there', errno.ENODATA, os.removexattr, t,
               'user.cellfs.family.nothere')
    b = snap()
    e = errno_of(os.setxattr, t, 'user.cellfs.delimiter', b'#')
    ok('setfattr user.cellfs.delimiter to its value: succeeds', e == 0, ename(e))
    same('setfattr user.cellfs.delimiter to its value', b, snap())
    expect_err('setfattr user.cellfs.delimiter to another value', errno.EPERM, os.setxattr, t,
               'user.cellfs.delimiter', b'.')
    expect_err('setfattr user.cellfs.delimiter to two bytes', errno.EPERM, os.setxattr, t,
               'user.cellfs.delimiter', b'##')
    expect_err('removexattr user.cellfs.delimiter', errno.EPERM, os.removexattr, t, 'user.cellfs.delimiter')
    expect_err('setfattr of another user.cellfs. attribute', errno.EOPNOTSUPP, os.setxattr, t, 'user.cellfs.other',
               b'x')
    expect_err('setfattr user.other on a table', errno.EOPNOTSUPP, os.setxattr, t, 'user.other', b'x')
    expect_err('setfattr of a family on a key directory', errno.EOPNOTSUPP, os.setxattr, M('xa/r'),
               'user.cellfs.family.zz', b'never')
    expect_err('setfattr on a file', errno.EOPNOTSUPP, os.setxattr, M('xa/r/full/q'), 'user.cellfs.family.zz',
               b'never')


@scenario
def shows_at_once():
    d = M('w/h/vis/cf')
    before = listdir(d)
    os.stat(d + '/q')  # (attributes, listing and pages cached before the write)
    read(d + '/q')
    sh_ok('echo > q after ls, stat and cat', 'echo second > w/h/vis/cf/q')
    a = snap()
    ts = max(a.column('w', b'h#vis', 'cf', b'q'))
    ok('after echo >: ls shows the old newest as q@TS at once', listdir(d) == ['q', 'q@%016d' % T0],
       '%s (before %s)' % (listdir(d), before))
    sees('after echo > (cached before)', d + '/q', b'second\n', ts)
    ok('after echo >: the old value by its q@TS', read(d + '/q@%016d' % T0) == b'first')
    ok('after echo >: stat of the directory\'s mtime is the newest cell\'s', os.stat(d).st_mtime_ns == ts * 1000,
       '%d vs %d' % (os.stat(d).st_mtime_ns, ts * 1000))
    out = cellctl('read', 'w', 'prefix=h#vis')
    ok('after echo >: cellctl read shows both versions at once', b'"second\\n"' in out and b'"first"' in out,
       out.decode()[:400])
    # a reader holding the old value while the file is rewritten (what it reads: README, "Not covered here")
    fd = os.open(d + '/q', os.O_RDONLY)
    sh_ok('echo > q while a reader holds it', 'echo third > w/h/vis/cf/q')
    os.read(fd, 100)
    os.close(fd)
    ok('a new open after a rewrite while another reader held it: the new value', read(d + '/q') == b'third\n')


@scenario
def shell_scripts():
    """What loading scripts do: loops of mkdir -p and echo >, >>, here-documents, printf, cp, cp -r, cp -a."""
    b = snap()
    sh_ok('mkdir -p and echo in loops', '''
        for r in 1 2 3 4 5; do
            mkdir -p w/sc/loop/$r/cf w/sc/loop/$r/meta
            for q in a b c d; do echo "$r-$q" > w/sc/loop/$r/cf/$q; done
            echo "row $r" > w/sc/loop/$r/meta/name
            echo "more" >> w/sc/loop/$r/meta/name
        done''')
    a = snap()
    want = {}
    for r in '12345':
        for q in 'abcd':
            want[('sc#loop#' + r).encode(), 'cf', q.encode()] = ('%s-%s\n' % (r, q)).encode()
    ad = delta(b, a)[0]
    got = {k[1:4]: v for k, v in ad.items() if k[2] == 'cf'}
    ok('loops of mkdir -p and echo >: 20 cells, one each', got == want and
       len([k for k in ad if k[2] == 'cf']) == 20, describe(b, a))
    names = {}
    for k, v in ad.items():
        if k[2] == 'meta':
            names.setdefault(k[1], []).append((k[4], v))
    ok('echo > then >> in the loop: two versions each, the newer with the line appended',
       sorted(names) == [b'sc#loop#%d' % r for r in range(1, 6)] and
       all([v for _, v in sorted(vs)] == [b'row %s\n' % r[-1:], b'row %s\nmore\n' % r[-1:]]
           for r, vs in names.items()) and len(ad) == 30, describe(b, a))
    ok('... family meta created', a.fams.get(('w', 'meta')) == b'never')
    b = snap()
    t0 = now_us()
    sh_ok('here-document', '''mkdir -p w/sc/doc/cf && cat > w/sc/doc/cf/text <<EOF
line one
  indented \\$HOME $((1+2))
EOF''')
    new_cell('cat > f <<EOF: the document', b, snap(), 'w', b'sc#doc', 'cf', b'text',
             b'line one\n  indented $HOME 3\n', t0, now_us())
    b = snap()
    t0 = now_us()
    sh_ok('printf', r"printf '%s\0%05d\xff' key 42 > w/sc/doc/cf/bin")
    new_cell('printf with NUL and 0xFF: the bytes', b, snap(), 'w', b'sc#doc', 'cf', b'bin', b'key\x0000042\xff', t0,
             now_us())
    # cp of local files, one of 3 MiB of random bytes
    src = os.path.join(WORK, 'files')
    os.makedirs(src)
    blobs = {'small': b'small file\n', 'empty': b'', 'random': os.urandom(3 * MIB + 7)}
    for n, v in blobs.items():
        with open(os.path.join(src, n), 'wb') as f:
            f.write(v)
    b = snap()
    t0 = now_us()
    sh_ok('cp files', 'mkdir -p w/sc/cp/cf && cp %s/small %s/empty %s/random w/sc/cp/cf/' % (src, src, src))
    a = snap()
    ad, rm, ch = delta(b, a)
    ok('cp of three files (one 3 MiB random): three cells, exact bytes, now',
       {k[3]: v for k, v in ad.items() if k[1] == b'sc#cp'} == {n.encode(): v for n, v in blobs.items()} and
       len(ad) == 3 and not rm and not ch and all(t0 // 1000 * 1000 <= k[4] <= now_us() for k in ad),
       describe(b, a))
    ok('cmp of the copy through the mount', read(M('w/sc/cp/cf/random')) == blobs['random'])
    # cp -r of a tree: directories are key segments, the last one the family
    tree = os.path.join(WORK, 'tree')
    files = {'r1/cf/q1': b'1', 'r1/cf/q2': b'2', 'r2/sub/cf/q3': b'3', 'r2/sub/meta/q4': b'4',
             'r2/nf/q5': b'5', 'r3/deep/er/cf/q6': b'6'}
    for p, v in files.items():
        os.makedirs(os.path.dirname(os.path.join(tree, p)), exist_ok=True)
        with open(os.path.join(tree, p), 'wb') as f:
            f.write(v)
        os.utime(os.path.join(tree, p), ns=(0, (T0 + int(v)) * 1000))
    want = {}
    for p, v in files.items():
        parts = p.split('/')
        want[(('imp#' + '#'.join(parts[:-2])).encode(), parts[-2], parts[-1].encode())] = v
    b = snap()
    t0 = now_us()
    sh_ok('cp -r tree', 'cp -r %s w/sc/imp' % tree)
    a = snap()
    ad, rm, ch = delta(b, a)
    ok('cp -r of a tree into the mount: row = the path, family = the last directory, one cell per file',
       {(k[1][3:], k[2], k[3]): v for k, v in ad.items()} == want and not rm and not ch and
       all(t0 // 1000 * 1000 <= k[4] for k in ad), describe(b, a))
    ok('... family nf created', a.fams.get(('w', 'nf')) == b'never')
    b = snap()
    sh_ok('cp -a tree', 'cp -a %s w/sc/impa' % tree)
    a = snap()
    ad, rm, ch = delta(b, a)
    ok('cp -a of a tree: the same cells at the files\' mtimes',
       {(b'imp' + k[1][7:], k[2], k[3], k[4]): v for k, v in ad.items()} ==
       {(k[0], k[1], k[2], T0 + int(v)): v for k, v in want.items()} and not rm and not ch, describe(b, a))
    b = snap()
    sh_ok('rsync -a tree', 'rsync -a %s/ w/sc/imprs/' % tree)
    a = snap()
    ad, rm, ch = delta(b, a)
    ok('rsync -a of a tree: the same cells at the files\' mtimes',
       {(b'imp' + k[1][8:], k[2], k[3], k[4]): v for k, v in ad.items()} ==
       {(k[0], k[1], k[2], T0 + int(v)): v for k, v in want.items()} and not rm and not ch, describe(b, a))


@scenario
def parallel_writers():
    """Eight processes writing at once: 400 cells in one row; 160 versions of one column, none lost."""
    os.makedirs(M('w/par/r/cf'))
    b = snap()
    sh_ok('xargs -P 8 echo > 400 files', "seq 0 399 | xargs -P 8 -I{} sh -c 'echo {} > w/par/r/cf/q{}'")
    a = snap()
    ad, rm, ch = delta(b, a)
    ok('8 processes writing 400 files: 400 cells, each its value',
       {(k[1], k[3]): v for k, v in ad.items()} == {(b'par#r', b'q%d' % i): b'%d\n' % i for i in range(400)}
       and not rm and not ch, describe(b, a))
    b = a
    sh_ok('8 processes writing one column 20 times each',
          "for p in 1 2 3 4 5 6 7 8; do (for i in $(seq 20); do echo $p.$i > w/par/r/cf/same; done) & done; wait")
    a = snap()
    col = a.column('w', b'par#r', 'cf', b'same')
    want = sorted(b'%d.%d\n' % (p, i) for p in range(1, 9) for i in range(1, 21))
    ok('8 processes x 20 echo > of one column: 160 versions, every value once, whole ms apart',
       sorted(col.values()) == want and all(t % 1000 == 0 for t in col), '%d versions, %d distinct values' % (
           len(col), len(set(col.values()))))
    ok('... the bare name reads the newest', read(M('w/par/r/cf/same')) == col[max(col)] if col else False)


@scenario
def ten_thousand_cells():
    b = snap()
    t0 = time.monotonic()
    sh_ok('a script writing 10,000 cells', '''
        for r in $(seq -w 0 99); do
            mkdir -p w/load/r$r/cf
            for q in $(seq -w 0 99); do echo "v$r.$q" > w/load/r$r/cf/q$q; done
        done''')
    t1 = time.monotonic()
    a = snap()
    ad, rm, ch = delta(b, a)
    want = {(('load#r%02d' % r).encode(), b'q%02d' % q): b'v%02d.%02d\n' % (r, q) for r in range(100)
            for q in range(100)}
    got = {(k[1], k[3]): v for k, v in ad.items() if k[2] == 'cf'}
    ok('10,000 cells written by a script: each there, once, with its value (one dump)',
       got == want and len(ad) == 10000 and not rm and not ch, '%d added, %d right; %s' % (
           len(ad), sum(got.get(k) == v for k, v in want.items()), describe(b, a)))
    ok('10,000 cells: listed through the mount', sum(len(os.listdir(M('w/load/r%02d/cf' % r))) for r in range(100))
       == 10000)
    b = a
    t2 = time.monotonic()
    sh_ok('rm -r of the 100 rows', 'rm -r w/load')
    t3 = time.monotonic()
    a = snap()
    expect('rm -r of 100 rows of 100 cells: every one gone, nothing else', b, a,
           removed=[k for k in b.cells if k[1].startswith(b'load#')])
    print('10,000 cells written in %.1fs, removed in %.1fs' % (t1 - t0, t3 - t2))


def cmd_main(mnt, db, state):
    global MNT, DB
    MNT, DB = mnt, db
    try:
        only = os.environ.get('WRITECHECK_ONLY', '').split()  # (by hand: these scenarios alone)
        for f in SCENARIOS:
            if only and f.__name__ not in only:
                continue
            t0 = time.monotonic()
            try:
                f()
            except Exception:
                ok('%s ran to its end' % f.__name__, False, traceback.format_exc()[-1500:])
            print('%-32s %5.1fs, %d checks so far' % (f.__name__, time.monotonic() - t0, passed + len(failed)))
        held = [p for p in HELD if os.path.isdir(M(p))]
        with open(state, 'wb') as f:
            pickle.dump({'snap': snap(), 'held': held}, f)
    finally:
        done('main')


# ---- after a remount ------------------------------------------------------------------------------------------

def cmd_after(mnt, db, state):
    global MNT, DB
    MNT, DB = mnt, db
    with open(state, 'rb') as f:
        st = pickle.load(f)
    same('unmount and remount', st['snap'], snap())
    for p in st['held']:
        ok('a directory only the daemon held is gone after a remount: %s' % p, not os.path.exists(M(p)))
    ok('(there were held directories to look for)', len(st['held']) >= 4, str(st['held']))
    done('after')


# ---- -o ro -----------------------------------------------------------------------------------------------------

def cmd_ro(mnt, db):
    global MNT, DB
    MNT, DB = mnt, db
    f = M('w/h/dup/cf/q')
    E = errno.EROFS
    expect_err('ro: create', E, write, M('w/h/dup/cf/new'), b'x')
    expect_err('ro: open O_WRONLY', E, os.open, f, os.O_WRONLY)
    expect_err('ro: open O_RDWR|O_TRUNC', E, os.open, f, os.O_RDWR | os.O_TRUNC)
    expect_err('ro: truncate', E, os.truncate, f, 1)
    expect_err('ro: utimensat', E, os.utime, f, ns=(0, 10**18))
    expect_err('ro: chmod', E, os.chmod, f, 0o600)
    expect_err('ro: unlink', E, os.unlink, f)
    expect_err('ro: mkdir at the top', E, os.mkdir, M('newtable'))
    expect_err('ro: mkdir', E, os.mkdir, M('w/newdir'))
    expect_err('ro: rmdir of a table', E, os.rmdir, M('made'))
    expect_err('ro: rename', E, os.rename, f, M('w/h/dup/cf/q2'))
    expect_err('ro: rename of a key directory', E, os.rename, M('w/h'), M('w/h2'))
    expect_err('ro: symlink', E, os.symlink, 'q', M('w/h/dup/cf/s'))
    expect_err('ro: setfattr', E, os.setxattr, M('w'), 'user.cellfs.family.zz', b'never')
    expect_err('ro: removexattr', E, os.removexattr, M('w'), 'user.cellfs.family.k1')
    ok('ro: reads work', read(f) == b'a\nb\n', short(read(f)))
    done('ro')


# ---- -o strict_schema ------------------------------------------------------------------------------------------

def cmd_strict(mnt, db):
    global MNT, DB
    MNT, DB = mnt, db
    os.makedirs(M('w/st/r/cf'))
    b = snap()
    t0 = now_us()
    write(M('w/st/r/cf/q'), b'known')
    new_cell('strict_schema: a file in a known family is written', b, snap(), 'w', b'st#r', 'cf', b'q', b'known', t0,
             now_us())
    os.makedirs(M('w/st/r/unknown'))
    expect_err('strict_schema: a file in an unknown family', errno.EPERM, write, M('w/st/r/unknown/q'), b'x')
    b = snap()
    rc, out, err = sh('echo x > w/st/r/unknown/q2')
    ok('strict_schema: echo > into an unknown family: the shell reports EPERM',
       rc != 0 and b'Operation not permitted' in err, 'exit %d, %r' % (rc, err))
    same('strict_schema: echo > into an unknown family', b, snap())
    expect_err('strict_schema: rename into an unknown family', errno.EPERM, os.rename, M('w/st/r/cf/q'),
               M('w/st/r/unknown/q'))
    b = snap()
    e = errno_of(os.setxattr, M('w'), 'user.cellfs.family.unknown', b'never')
    a = snap()
    ok('strict_schema: setfattr still creates a family', e == 0 and a.fams.get(('w', 'unknown')) == b'never',
       '%s; %s' % (ename(e), describe(b, a)))
    b = snap()
    t0 = now_us()
    e = errno_of(write, M('w/st/r/unknown/q'), b'now known')
    ok('strict_schema: once declared, a file in that family is written', e == 0, ename(e))
    new_cell('strict_schema: once declared', b, snap(), 'w', b'st#r', 'unknown', b'q', b'now known', t0, now_us())
    done('strict')


# ---- -o delimiter=. ------------------------------------------------------------------------------------------

def cmd_delim(mnt, db):
    global MNT, DB
    MNT, DB = mnt, db
    b = snap()
    sh_ok('mkdir a table, -o delimiter=.', 'mkdir dotted && mkdir -p dotted/com/example/www/cf && '
          'echo page > dotted/com/example/www/cf/html')
    a = snap()
    ok('-o delimiter=.: mkdir at the top makes a table split on \'.\'', a.tables.get('dotted', (0,))[0] == ord('.'),
       str(a.tables.get('dotted')))
    ok('-o delimiter=.: mkdir -p and echo: row com.example.www',
       [(k[1], k[2], k[3], v) for k, v in a.cells.items() if k[0] == 'dotted'] ==
       [(b'com.example.www', 'cf', b'html', b'page\n')], describe(b, a))
    ok('-o delimiter=.: user.cellfs.delimiter', os.getxattr(M('dotted'), 'user.cellfs.delimiter') == b'.')
    expect_err('-o delimiter=.: a segment with the delimiter', errno.EINVAL, os.mkdir, M('dotted/a.b'))
    b = snap()
    sh_ok('-o delimiter=.: an existing table keeps #', 'mkdir -p w/dl/x/cf && echo hash > w/dl/x/cf/q')
    ad = delta(b, snap())[0]
    ok('-o delimiter=.: a table made before keeps its own delimiter (row dl#x)',
       [(k[1], v) for k, v in ad.items()] == [(b'dl#x', b'hash\n')], str(ad))
    done('delim')


# ---- after SIGKILL ------------------------------------------------------------------------------------------

def cmd_crash_check(db):
    global DB
    DB = db
    s = snap()
    ok('daemon killed: a file closed before is in the store', s.column('w', b'dur#r', 'cf', b'closed') and
       list(s.column('w', b'dur#r', 'cf', b'closed').values()) == [b'committed\n'],
       str(s.column('w', b'dur#r', 'cf', b'closed')))
    ok('daemon killed: a file fsync\'d and still open is in the store',
       list(s.column('w', b'dur#r', 'cf', b'synced').values()) == [b'synced'],
       str(s.column('w', b'dur#r', 'cf', b'synced')))
    ok('daemon killed: a file open, written, never flushed: nothing of it', not s.column('w', b'dur#r', 'cf', b'open'),
       str(s.column('w', b'dur#r', 'cf', b'open')))
    done('crash-check')


# ---- 100,000 cells under one directory --------------------------------------------------------------------------

def cmd_big(mnt, db):
    global MNT, DB
    MNT, DB = mnt, db
    b = snap()
    n = sum(1 for k in b.cells if k[0] == 'big')
    ok('big: 100,000 cells under big/big', n == 100000, str(n))
    t0 = time.monotonic()
    e = errno_of(os.rename, M('big/big'), M('big/moved'))
    t1 = time.monotonic()
    ok('rename of a key directory of exactly 100,000 cells: succeeds', e == 0, ename(e))
    a = snap()
    moved = {k: v for k, v in b.cells.items() if k[0] == 'big'}
    expect('... every cell moved, unchanged', b, a, added={(k[0], b'moved' + k[1][3:]) + k[2:]: v
                                                           for k, v in moved.items()}, removed=list(moved))
    ok('... listed', len(os.listdir(M('big/moved'))) == 100000)
    cellctl('set', 'big', 'moved#x', 'f:v=one more@%d' % T0)
    expect_err('rename of a key directory of 100,001 cells', errno.EXDEV, os.rename, M('big/moved'), M('big/again'))
    print('big: 100,000 cells renamed in %.2fs' % (t1 - t0))
    done('big')


def main():
    global WORK
    cmds = {'seed': cmd_seed, 'main': cmd_main, 'after': cmd_after, 'ro': cmd_ro, 'strict': cmd_strict,
            'delim': cmd_delim, 'crash-check': cmd_crash_check, 'big': cmd_big}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    WORK = tempfile.mkdtemp(prefix='writecheck.')
    try:
        cmds[sys.argv[1]](*sys.argv[2:])
    finally:
        shutil.rmtree(WORK, ignore_errors=True)


WORK = None

if __name__ == '__main__':
    main()
