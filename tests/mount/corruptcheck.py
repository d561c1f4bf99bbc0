#!/usr/bin/env python3
"""corruptcheck.py — a damaged store through the daemon (the contract, fs/CONTRACT.md, "Bad input": a
damaged store is EIO and a log line, never a crash). corrupt.sh builds a store of several tables; this script copies it
N times with one byte changed (a seeded sample, mostly bytes in use) and for each copy:

  - runs `cellctl verify` (exit 0, or 1 with one summary line) and `cellctl dump` (0 or 1): never a crash;
  - dumps it with dump_store (the store API, no fs/ code), which may fail;
  - mounts it (`cellfs COPY MNT -f`) and walks everything: listing of every directory, lstat of every
    entry, every file read whole, every table's extended attributes. Every failure must be EIO; the
    daemon must still run and the mount still be there after the walk (a second stat of the root works);
  - each table the copy's dump shows exactly as the original's must read through the mount exactly as the
    original did (same names, types, sizes, mtimes, contents): damage elsewhere does not spill over;
  - unmounts: the daemon exits 0; what it printed is only its own log lines ("cellfs: ..."), never a
    sanitizer report.

Usage: corruptcheck.py run STORE MNT TMPDIR N SEED [CUTS [FIXED]]
  N copies with one byte changed (seed SEED), after the FIXED ones (OFFSET:XOR,...); CUTS copies cut short
Environment: CELLFS, CELLCTL, DUMP_STORE. Exit status 0 (all good) or 1 (failures listed on stderr).
"""
import errno
import hashlib
import os
import shutil
import stat as S
import subprocess
import sys
import time

sys.dont_write_bytecode = True

failures = []


def fail(copy, msg):
    failures.append('%s: %s' % (copy, msg))


def is_mounted(mnt):
    with open('/proc/mounts') as f:
        return any(line.split()[1] == mnt for line in f)


def walk(mnt):
    """{relpath: entry} and [(relpath, op, errno)] for every failure."""
    seen, errs = {}, []

    def err(rel, op, e):
        errs.append((rel, op, e.errno))

    def visit(rel, path):
        try:
            names = os.listdir(path)
        except OSError as e:
            err(rel, 'readdir', e)
            return
        for n in sorted(names):
            r = rel + '/' + n if rel else n
            p = path + '/' + n
            try:
                st = os.lstat(p)
            except OSError as e:
                err(r, 'lstat', e)
                continue
            entry = [S.S_IFMT(st.st_mode), st.st_size, st.st_mtime_ns]
            if S.S_ISDIR(st.st_mode):
                if not rel:  # a table: its schema
                    try:
                        entry.append(sorted((x, os.getxattr(p, x)) for x in os.listxattr(p)))
                    except OSError as e:
                        err(r, 'xattr', e)
                seen[r] = entry
                visit(r, p)
            else:
                try:
                    with open(p, 'rb') as f:
                        entry.append(hashlib.sha256(f.read()).hexdigest())
                except OSError as e:
                    err(r, 'read', e)
                seen[r] = entry

    visit('', mnt)
    return seen, errs


def dump_tables(dumpdir):
    """{table: (its lines of dump.txt, its values)}: what the store API returns for each table."""
    with open(dumpdir + '/values.bin', 'rb') as f:
        vals = f.read()
    out = {}
    with open(dumpdir + '/dump.txt', errors='surrogateescape') as f:  # damaged names: any bytes
        for line in f:
            w = line.split()
            lines, v = out.setdefault(w[1], ([], []))
            if w[0] == 'cell':
                n, off = int(w[6]), int(w[7])
                lines.append(' '.join(w[:6]))
                v.append(vals[off:off + n])
            else:
                lines.append(line.strip())
    return out


def run_dump(store, dumpdir):
    shutil.rmtree(dumpdir, ignore_errors=True)
    os.mkdir(dumpdir)
    try:
        p = subprocess.run([os.environ['DUMP_STORE'], store, dumpdir], capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, 'timeout'
    return (dump_tables(dumpdir) if p.returncode == 0 else None), p.returncode


# CELLFS_TRANSPORT (as lib.sh): uring, fuse or unset (the daemon's default)
TRANSPORT_OPTS = {'uring': ['-o', 'uring'], 'fuse': ['-o', 'nouring'], '': []}[os.environ.get('CELLFS_TRANSPORT', '')]
TRANSPORT_WANT = {'uring': 'cellfs: transport: io_uring (', 'fuse': 'cellfs: transport: /dev/fuse (-o nouring)',
                  '': 'cellfs: transport: '}[os.environ.get('CELLFS_TRANSPORT', '')]


def mount(store, mnt, errpath, opts=()):
    """cellfs STORE MNT -f OPTS..., its stderr to ERRPATH; returns the daemon (Popen) once mounted (or gone)."""
    errf = open(errpath, 'wb')
    d = subprocess.Popen([os.environ['CELLFS'], store, mnt, '-f', *TRANSPORT_OPTS, *opts], stderr=errf,
                         stdout=subprocess.DEVNULL)
    d.errpath = errpath
    errf.close()
    for _ in range(6000):
        if is_mounted(mnt):
            return d
        if d.poll() is not None:
            return d
        time.sleep(0.01)
    return d


def unmount(d, mnt):
    subprocess.run(['fusermount3', '-u', mnt], capture_output=True)
    if is_mounted(mnt):
        subprocess.run(['fusermount3', '-uz', mnt], capture_output=True)
    try:
        rc = d.wait(timeout=120)
    except subprocess.TimeoutExpired:
        d.kill()
        rc = d.wait()
    strip_transport(d.errpath)
    return rc


def strip_transport(errpath):
    """Take the daemon's line naming its transport (lib.sh's strip_transport) out of ERRPATH; a line naming
    another transport than CELLFS_TRANSPORT's stays, so that the caller's check of the log fails."""
    with open(errpath, 'rb') as f:
        lines = f.read().decode(errors='replace').splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.startswith('cellfs: transport: '):
            if line.startswith(TRANSPORT_WANT):
                del lines[i]
                with open(errpath, 'w') as f:
                    f.write(''.join(lines))
            break


def walk_in_child(mnt, tmp, daemon):
    """The walk in a child process, so that a hung request cannot hang the test: (seen, errs), 'hung' or
    None (it died). A walker waiting on a request the daemon never answers ignores SIGKILL until the
    request ends: killing the daemon ends it."""
    out = tmp + '/walk.out'
    p = subprocess.Popen([sys.executable, __file__, 'walk', mnt, out])
    try:
        p.wait(timeout=120)
    except subprocess.TimeoutExpired:
        p.kill()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            p.wait()
        return 'hung'
    if p.returncode != 0:
        return None
    with open(out) as f:
        return eval(f.read())  # our own repr of plain lists and dicts


def cmd_walk(mnt, out):
    seen, errs = walk(mnt)
    with open(out, 'w') as f:
        f.write(repr((seen, errs)))


def flip_sample(data, n, seed):
    """N (offset, xor) pairs: four in five among the non-zero bytes (most of a small LMDB file is free)."""
    used = [i for i, b in enumerate(data) if b]
    out = []
    for i in range(n):
        seed = (seed * 1103515245 + 12345) % 2147483648
        off = seed % len(data) if i % 5 == 4 else used[seed % len(used)]
        out.append((off, (seed >> 8) % 255 + 1))
    return out


def cmd_run(store, mnt, tmp, n, seed, cuts='0', fixed='-'):
    n, seed, cuts = int(n), int(seed), int(cuts)
    with open(store + '/data.mdb', 'rb') as f:
        data = f.read()
    base, rc = run_dump(store, tmp + '/dump0')
    if base is None:
        sys.exit('dump_store of the intact store failed (%s)' % rc)
    d = mount(store, mnt, tmp + '/daemon0.err')
    if not is_mounted(mnt):
        sys.exit('the intact store does not mount')
    orig, errs = walk(mnt)
    if unmount(d, mnt) != 0 or errs or os.path.getsize(tmp + '/daemon0.err'):
        sys.exit('the intact store does not walk cleanly: %s' % errs[:5])

    stats = {'verify-damaged': 0, 'verify-fault': 0, 'eio': 0, 'copies-with-eio': 0, 'intact-tables': 0,
             'dump-failed': 0, 'logged': 0}
    copy = tmp + '/copy'
    # FIXED flips first (OFFSET:XOR,...), then the seeded sample, then CUTS copies cut short at page
    # boundaries spread over the file (SIGBUS where a value's pages are gone).
    flips = [tuple(int(x) for x in f.split(':')) for f in fixed.split(',') if f != '-'] + flip_sample(data, n, seed)
    pages = len(data) // 4096
    sizes = sorted({4096 * (2 + (pages - 2) * i // cuts) for i in range(cuts)}) if cuts and pages > 2 else []
    for off, x in flips + [(size, None) for size in sizes]:
        shutil.rmtree(copy, ignore_errors=True)
        os.mkdir(copy)
        if x is None:
            name = 'cut to %d bytes' % off
            b = data[:off]
        else:
            name = 'offset %d xor %d' % (off, x)
            b = bytearray(data)
            b[off] ^= x
        with open(copy + '/data.mdb', 'wb') as f:
            f.write(b)

        env = dict(os.environ, CELLFS_DB='')
        try:
            v = subprocess.run([os.environ['CELLCTL'], '--db', copy, 'verify'], capture_output=True,
                               timeout=120, env=env)
            vrc, verr = v.returncode, v.stderr.decode(errors='replace')
        except subprocess.TimeoutExpired:
            vrc, verr = 'timeout', ''
        if vrc not in (0, 1) or (vrc == 1 and (verr.count('\n') != 1 or not verr.startswith('cellctl verify: '))):
            fail(name, 'cellctl verify: status %s, stderr %r' % (vrc, verr[:300]))
        if vrc == 1:
            stats['verify-damaged'] += 1
            if 'the store file is damaged' in verr:
                stats['verify-fault'] += 1

        try:  # cellctl reading everything: an error, never a crash
            c = subprocess.run([os.environ['CELLCTL'], '--db', copy, 'dump'], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=120, env=env)
            if c.returncode not in (0, 1):
                fail(name, 'cellctl dump: status %s: %r' % (c.returncode, c.stderr[:300]))
        except subprocess.TimeoutExpired:
            fail(name, 'cellctl dump: hung')

        dump, drc = run_dump(copy, tmp + '/dump')
        if dump is None:
            stats['dump-failed'] += 1
            if drc not in (1,):
                fail(name, 'dump_store: status %s' % drc)

        errpath = tmp + '/daemon.err'
        d = mount(copy, mnt, errpath)
        if not is_mounted(mnt):
            # refusing a store it cannot open is fine, with one line naming it
            rc = d.wait()
            with open(errpath, 'rb') as f:
                e = f.read().decode(errors='replace')
            if rc != 1 or e.count('\n') != 1 or not e.startswith('cellfs: '):
                fail(name, 'the daemon did not mount: status %s, stderr %r' % (rc, e[:300]))
            continue
        r = walk_in_child(mnt, tmp, d)
        alive = d.poll() is None and is_mounted(mnt)
        if r is None or r == 'hung':
            fail(name, 'the walk %s (daemon %s)' % ('hung' if r else 'died',
                                                   'alive' if alive else 'gone, status %s' % d.poll()))
        else:
            seen, errs = r
            bad = [e for e in errs if e[2] != errno.EIO]
            if bad:
                fail(name, 'errors other than EIO: %s' % ['%s %s %s' % (p, op, errno.errorcode.get(c, c))
                                                          for p, op, c in bad[:5]])
            stats['eio'] += len(errs) - len(bad)
            stats['copies-with-eio'] += bool(errs)
            if not alive:
                fail(name, 'the daemon died during the walk (status %s)' % d.poll())
            elif dump is not None:
                for t, content in dump.items():
                    if base.get(t) != content:
                        continue
                    stats['intact-tables'] += 1
                    want = {k: v for k, v in orig.items() if k == t or k.startswith(t + '/')}
                    got = {k: v for k, v in seen.items() if k == t or k.startswith(t + '/')}
                    if want != got:
                        diff = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
                        fail(name, 'table %s reads as before through the store API but not through the '
                                   'mount: %s' % (t, diff[:5]))
            try:
                os.stat(mnt)
            except OSError as e:  # (EIO where the store's first pages are gone; ENOTCONN: no daemon)
                if e.errno != errno.EIO:
                    fail(name, 'the root after the walk: %s' % e)
        rc = unmount(d, mnt)
        with open(errpath, 'rb') as f:
            e = f.read().decode(errors='replace')
        if rc != 0:
            fail(name, 'the daemon exited with status %s: %r' % (rc, e[-500:]))
        lines = e.splitlines()
        if any(not ln.startswith('cellfs: ') for ln in lines):
            fail(name, 'the daemon printed something other than its log lines: %r' % e[:500])
        if 'Sanitizer' in e or 'runtime error' in e:
            fail(name, 'sanitizer report: %r' % e[:500])
        stats['logged'] += bool(lines)
    print('corrupt: %d copies with one byte changed, %d cut short; %s' % (len(flips), len(sizes), ', '.join('%s %d' % kv for kv in stats.items())))
    for m in failures[:40]:
        print('FAIL:', m, file=sys.stderr)
    if failures:
        print('corrupt: %d failures' % len(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    cmds = {'run': cmd_run, 'walk': cmd_walk}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
