#!/usr/bin/env python3
"""accessprobe.py — the system calls access.sh makes as one user or another, each with the errno it
must give. Subcommands (MNT: the mount of access.sh's store: table t, row r1, cf:q = "v"; table empty):

  private MNT                 (as another user, no allow_other) everything is EACCES
  other MNT                   (as another user, allow_other) reads work by the reported modes; writes EACCES
  root-writes MNT             (as the mounting user, allow_other) writes work
  owner MNT TMP CELLCTL DB    (as the mounting user) `..`, escaped '/' and '..' stay inside; EXDEV out

Exit status 0 (all as expected) or 1 (each failure on stderr).
"""
import errno
import os
import stat as S
import subprocess
import sys

sys.dont_write_bytecode = True  # (nobody runs this too: no __pycache__ in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from writecheck import read, write  # noqa: E402  (written once)

failed = 0


def expect(what, want, fn, *a, **k):
    """Call FN(*A, **K); its errno (0: success) must be WANT."""
    global failed
    try:
        r = fn(*a, **k)
        got = 0
    except OSError as e:
        r, got = None, e.errno
    if got != want:
        failed += 1
        print('FAIL: uid %d: %s: %s, want %s' % (os.getuid(), what, errno.errorcode.get(got, 'success'),
                                                 errno.errorcode.get(want, 'success')), file=sys.stderr)
    return r


def check(what, cond):
    global failed
    if not cond:
        failed += 1
        print('FAIL: uid %d: %s' % (os.getuid(), what), file=sys.stderr)


def writes(m, want, times=None):
    """Every kind of write, each WANT (TIMES: for utimens with explicit times, which POSIX refuses a
    non-owner with EPERM); the store ends as it began when WANT is an error."""
    f = m + '/t/r1/cf/q'
    expect('create', want, write, m + '/t/r1/cf/new', b'x')
    expect('overwrite', want, write, f, b'w')
    expect('append', want, write, f, b'a', os.O_WRONLY | os.O_APPEND)
    expect('truncate', want, os.truncate, f, 0)
    expect('utimens', want if times is None else times, os.utime, f, ns=(2 * 10**18, 2 * 10**18))
    expect('setxattr', want, os.setxattr, m + '/t', 'user.cellfs.family.zz', b'never')
    expect('removexattr', want, os.removexattr, m + '/t', 'user.cellfs.family.zz' if not want else 'user.cellfs.family.cf')
    expect('mkdir (table)', want, os.mkdir, m + '/newtable')
    expect('mkdir', want, os.mkdir, m + '/t/r2')
    expect('rename', want, os.rename, f, m + '/t/r1/cf/q2')
    expect('unlink', want, os.unlink, f if want else m + '/t/r1/cf/q2')
    expect('rmdir (table)', want, os.rmdir, m + '/empty')


def cmd_private(m):
    for what, fn, a in [('stat MNT', os.stat, (m,)), ('listdir MNT', os.listdir, (m,)),
                        ('stat a file', os.stat, (m + '/t/r1/cf/q',)), ('read a file', read, (m + '/t/r1/cf/q',)),
                        ('getxattr', os.getxattr, (m + '/t', 'user.cellfs.delimiter'))]:
        expect(what, errno.EACCES, fn, *a)
    writes(m, errno.EACCES)


def cmd_other(m):
    st = expect('stat MNT', 0, os.stat, m)
    check('the root is a directory 0755 owned by root', st and S.S_IMODE(st.st_mode) == 0o755 and st.st_uid == 0)
    st = expect('stat a file', 0, os.stat, m + '/t/r1/cf/q')
    check('a file is 0644 owned by root', st and S.S_IMODE(st.st_mode) == 0o644 and st.st_uid == 0)
    check('listing', expect('listdir', 0, os.listdir, m + '/t/r1') == ['cf'])
    check('reading', expect('read', 0, read, m + '/t/r1/cf/q') == b'v')
    check('the schema', expect('getxattr', 0, os.getxattr, m + '/t', 'user.cellfs.family.cf') == b'never')
    writes(m, errno.EACCES, errno.EPERM)


def cmd_root_writes(m):
    writes(m, 0)


def cmd_owner(m, tmp, cellctl, db):
    check('t/.. is the root', os.stat(m + '/t/..').st_ino == os.stat(m).st_ino)
    check('t/r1/cf/.. is t/r1', os.stat(m + '/t/r1/cf/..').st_ino == os.stat(m + '/t/r1').st_ino)
    check('the root\'s .. is outside the mount (its parent)', os.stat(m + '/..').st_ino == os.stat(tmp).st_ino)
    for seg, key in [('a%2Fb', b'a/b'), ('%2E%2E', b'..'), ('%2E', b'.'), ('..%2F..', b'../..')]:
        os.makedirs(m + '/t/' + seg + '/cf')
        write(m + '/t/' + seg + '/cf/q', b'inside')
        out = subprocess.run([cellctl, '--db', db, 'lookup', 't', key], capture_output=True).stdout
        check('%s is row %r of table t' % (seg, key), b'"inside"' in out)
        check('%s: nothing written outside the mount' % seg, not os.path.exists(tmp + '/cf'))
    expect('rename out of the mount', errno.EXDEV, os.rename, m + '/t/r1/cf/q', tmp + '/q')
    expect('link out of the mount', errno.EXDEV, os.link, m + '/t/r1/cf/q', tmp + '/q')
    expect('symlink to outside', errno.EPERM, os.symlink, '/etc/passwd', m + '/t/r1/cf/s')


if __name__ == '__main__':
    cmds = {'private': cmd_private, 'other': cmd_other, 'root-writes': cmd_root_writes, 'owner': cmd_owner}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
    sys.exit(1 if failed else 0)
