"""faultops.py — the file operations of the mount's fault workloads (tests/mount/fault.sh,
tests/bigtable/mountfault.sh): each prints one line, "NAME ok" or "NAME ERRNO", and says whether it
succeeded."""
import errno
import os


def op(name, f):
    try:
        r = f()
        print(name, "ok" if r is None or r is True else "wrong")
        return r is None or r is True
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, str(e.errno)))
        return False


def write(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
