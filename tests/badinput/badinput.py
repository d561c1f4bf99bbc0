#!/usr/bin/env python3
"""badinput.py — the bad-input table (cases.tsv) run against a store: each case is done through the mount
(a system call), through cellctl or through cellfs's command line, and must fail exactly as the
contract says (fs/CONTRACT.md, "Bad input") (errno, or exit status and the one-line message), and the store must
be the same before and after (dump_store, not the mount, is the judge).

Usage: badinput.py CASES STORE FULLSTORE MNT ROMNT TMP
  STORE      the fixture (badinput.sh writes it with cellctl), mounted read-write at MNT and with -o ro
             at ROMNT by this script
  FULLSTORE  a store on a file system with no room left, mounted at MNT while its cases run ('-': skip
             them, e.g. not root)
Environment: CELLFS, CELLCTL, DUMP_STORE. Exit status 0 (every case as the table says) or 1.

The table: one case a line, tab-separated: STORE IFACE EXPECT OPERATION [MESSAGE [STDIN]].
  STORE      base | full
  IFACE      mount (the read-write mount) | ro (the -o ro mount) | cli (cellctl --db STORE ...) |
             cellfs (cellfs STORE MNT ..., which must not mount)
  EXPECT     mount, ro: the errno's name (EINVAL, ENAMETOOLONG, ...); cli, cellfs: the exit status
  OPERATION  words as a shell splits them (shlex); {C*N} in a word is C repeated N times, \\n \\t \\xHH
             are escapes. mount and ro: a system call and its arguments, paths relative to the mount
             (see OPS); cli: cellctl's arguments; cellfs: cellfs's arguments after STORE MNT.
  MESSAGE    cli, cellfs: stderr, exactly (one line), or a regular expression after '~'; $DB and $MNT are
             replaced by the store's and the mountpoint's paths. mount, ro: unused.
  STDIN      cli: what cellctl reads on standard input (escapes as above); default empty.
Lines starting with # and blank lines are skipped.
"""
import errno
import os
import random
import re
import shlex
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'mount'))
from corruptcheck import is_mounted, mount, unmount  # noqa: E402  (mounting, written once)

failures = []


def expand(word):
    """{C*N} (C repeated N times), {C*N/M} (M such segments joined by '/'), {rand:N} (N letters and
    digits that do not compress, the same each run), then backslash escapes; as bytes."""
    word = re.sub(r'\{(.)\*(\d+)(?:/(\d+))?\}',
                  lambda m: '/'.join([m.group(1) * int(m.group(2))] * int(m.group(3) or 1)), word)
    word = re.sub(r'\{rand:(\d+)\}', lambda m: rand_text(int(m.group(1))), word)
    return word.encode('latin-1').decode('unicode_escape').encode('latin-1')


def rand_text(n):
    r = random.Random(n)
    return ''.join(r.choice('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789') for _ in range(n))


def fd_write(path, data, flags):
    fd = os.open(path, os.O_WRONLY | flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)  # the write-back happens here: its error is the case's


def op_pwrite(path, off, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, data, int(off))
    finally:
        os.close(fd)


def op_writerand(path, n):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, random.Random(int(n)).randbytes(int(n)))
    finally:
        os.close(fd)


def op_mknod(path):
    os.mknod(path, 0o644 | 0o010000)  # a fifo


# The system calls a mount case may name: NAME -> (function, which arguments are paths in the mount).
OPS = {
    'write': (lambda p, d: fd_write(p, d, os.O_CREAT | os.O_TRUNC), (0,)),
    'append': (lambda p, d: fd_write(p, d, os.O_APPEND), (0,)),
    'pwrite': (op_pwrite, (0,)),
    'writerand': (op_writerand, (0,)),
    'open-trunc': (lambda p: os.close(os.open(p, os.O_WRONLY | os.O_TRUNC)), (0,)),
    'truncate': (lambda p, n: os.truncate(p, int(n)), (0,)),
    'mkdir': (os.mkdir, (0,)),
    'makedirs': (os.makedirs, (0,)),
    'rmdir': (os.rmdir, (0,)),
    'unlink': (os.unlink, (0,)),
    'rename': (os.rename, (0, 1)),
    'symlink': (os.symlink, (1,)),
    'link': (os.link, (0, 1)),
    'mknod': (op_mknod, (0,)),
    'utime': (lambda p: os.utime(p, ns=(10**18, 10**18)), (0,)),
    'utime-1960': (lambda p: os.utime(p, ns=(0, -315619200 * 10**9)), (0,)),
    'chmod': (lambda p: os.chmod(p, 0o600), (0,)),
    'setxattr': (os.setxattr, (0,)),
    'removexattr': (os.removexattr, (0,)),
    'stat': (os.lstat, (0,)),
    'read': (lambda p: open(p, 'rb').read(), (0,)),
    'listdir': (os.listdir, (0,)),
    'getxattr': (os.getxattr, (0,)),
}


def dump(store, tmp):
    """The store's whole contents as dump_store prints them (bytes), or an error string."""
    out = os.path.join(tmp, 'dump')
    os.makedirs(out, exist_ok=True)
    p = subprocess.run([os.environ['DUMP_STORE'], store, out], capture_output=True)
    if p.returncode:
        return 'dump_store failed: %r' % p.stderr
    with open(out + '/dump.txt', 'rb') as f, open(out + '/values.bin', 'rb') as g:
        return f.read() + b'\0' + g.read()


def run_mount_case(mnt, want, words):
    """WORDS: a system call and its arguments; ';' separates steps, all but the last must succeed."""
    steps = [[]]
    for w in words:
        if w == ';':
            steps.append([])
        else:
            steps[-1].append(w)
    for st in steps[:-1]:
        good, why = run_mount_step(mnt, 'success', st)
        if not good:
            return False, 'preparing (%s): %s' % (' '.join(st), why)
    return run_mount_step(mnt, want, steps[-1])


def run_mount_step(mnt, want, words):
    name, args = words[0], [expand(w) for w in words[1:]]
    fn, paths = OPS[name]
    args = [os.path.join(mnt.encode(), a) if i in paths else
            (a.decode('latin-1') if name in ('setxattr', 'removexattr', 'getxattr') and i == 1 else a)
            for i, a in enumerate(args)]
    try:
        fn(*args)
        got = 'success'
    except OSError as e:
        got = errno.errorcode.get(e.errno, str(e.errno))
    return got == want, 'got %s, want %s' % (got, want)


def run_cli_case(store, mnt, want, words, message, stdin):
    args = [expand(w) for w in words]
    p = subprocess.run([os.environ['CELLCTL'].encode(), b'--db', store.encode()] + args, capture_output=True,
                       input=expand(stdin), env=dict(os.environ, TZ='UTC'))
    return judge(p, want, message.replace('$DB', store).replace('$MNT', mnt))


def run_cellfs_case(store, mnt, want, words, message):
    args = [expand(w) for w in words]
    try:
        p = subprocess.run([os.environ['CELLFS'].encode(), store.encode(), mnt.encode()] + args,
                           capture_output=True, timeout=300)
    except subprocess.TimeoutExpired:
        return False, 'did not exit (mounted?)'
    if is_mounted(mnt):
        subprocess.run(['fusermount3', '-u', mnt])
        return False, 'mounted'
    return judge(p, want, message.replace('$DB', store).replace('$MNT', mnt))


def judge(p, want, message):
    err = p.stderr.decode(errors='replace')
    if p.returncode < 0 or p.returncode >= 128:
        return False, 'died (status %d): %r' % (p.returncode, err[:300])
    if str(p.returncode) != want:
        return False, 'exit status %d, want %s; stderr %r' % (p.returncode, want, err[:300])
    if p.stdout:
        return False, 'printed on stdout: %r' % p.stdout[:200]
    if message.startswith('~'):
        good = err.count('\n') == 1 and re.fullmatch(message[1:], err[:-1]) is not None
    else:
        good = err == message + '\n'
    return good, 'stderr %r, want %r' % (err, message)


def changes(before, after):
    """What differs between two dumps, shortly."""
    if isinstance(before, str) or isinstance(after, str):
        return '%s / %s' % (before[:100], after[:100])
    b, a = set(before.split(b'\0')[0].split(b'\n')), set(after.split(b'\0')[0].split(b'\n'))
    return 'gone %r, new %r' % ([x[:100] for x in b - a][:3], [x[:100] for x in a - b][:3])


def read_cases(path):
    cases = []
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip() or line.startswith('#'):
                continue
            cols = line.split('\t')
            if len(cols) < 4 or len(cols) > 6:
                sys.exit('%s:%d: want 4 to 6 tab-separated columns, got %d' % (path, n, len(cols)))
            cols += [''] * (6 - len(cols))
            cases.append((n, *cols))
    return cases


def main(cases_path, store, fullstore, mnt, romnt, tmp):
    cases = read_cases(cases_path)
    counts = {}
    for st in ('base', 'full'):
        mine = [c for c in cases if c[1] == st]
        path = store if st == 'base' else fullstore
        if path == '-':
            print('badinput: %d cases on the full store skipped (no small tmpfs: not root?)' % len(mine))
            continue
        daemons = []
        if any(c[2] == 'mount' for c in mine):
            daemons.append((mount(path, mnt, os.path.join(tmp, st + '.err')), mnt, st + '.err'))
        if any(c[2] == 'ro' for c in mine):
            daemons.append((mount(path, romnt, os.path.join(tmp, st + '-ro.err'), ['-o', 'ro']), romnt,
                            st + '-ro.err'))
        for d, m, _ in daemons:
            if not is_mounted(m):
                sys.exit('cellfs %s %s did not mount' % (path, m))
        try:
            for n, _, iface, want, op, message, stdin in mine:
                words = shlex.split(op)
                before = dump(path, tmp)
                if iface in ('mount', 'ro'):
                    good, why = run_mount_case(mnt if iface == 'mount' else romnt, want, words)
                elif iface == 'cli':
                    good, why = run_cli_case(path, mnt, want, words, message, stdin)
                elif iface == 'cellfs':
                    good, why = run_cellfs_case(path, os.path.join(tmp, 'spare'), want, words, message)
                else:
                    sys.exit('%s:%d: unknown interface %r' % (cases_path, n, iface))
                after = dump(path, tmp)
                if after != before:
                    good, why = False, (why + '; ' if not good else '') + 'the store changed: ' + changes(before, after)
                counts[iface] = counts.get(iface, 0) + 1
                if not good:
                    failures.append('line %d (%s %s %s): %s' % (n, st, iface, op[:80], why))
        finally:
            for d, m, err in daemons:
                rc = unmount(d, m)
                with open(os.path.join(tmp, err), 'rb') as f:
                    e = f.read()
                if rc != 0 or e:
                    failures.append('the daemon of %s (%s) exited %s, stderr %r' % (m, st, rc, e[:300]))
    total = sum(counts.values())
    print('badinput: %d bad inputs tried (%s), %d failed' %
          (total, ', '.join('%s %d' % kv for kv in sorted(counts.items())), len(failures)))
    for f in failures:
        print('FAIL:', f, file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
