#!/usr/bin/env python3
"""concurcheck.py — the readers and the final judge of concur.sh (standard library only).

  reader DB MNT STOPFILE NAME   until STOPFILE exists: `cellctl lookup` of each writer's row and `cellctl
                                read prefix=imp_` (every row's newest cells must carry one generation),
                                and `cat`-like reads through the mount of files being rewritten (each must
                                be one whole value; those the shell rewrites may be empty, between its
                                O_TRUNC and its close, as on any file system); prints "NAME: N rows, M files checked".
  final DB MNT WRITERS IMPORTS MWRITERS   the end state: each row's newest cells are its last generation.

A value of generation G written by writer W is VAL(W, G): the tag "W.G|" (G six digits) repeated to 3000
bytes, so every generation has the same size and a torn or mixed read shows as two tags.
Environment: CELLCTL. Exit status 0, or 1 with every problem on stderr.
"""
import json
import os
import subprocess
import sys

CELLCTL = os.environ['CELLCTL']
bad = 0


def fail(msg):
    global bad
    bad += 1
    if bad <= 20:
        print('FAIL: ' + msg, file=sys.stderr)


def val(w, g):
    tag = '%s.%06d|' % (w, g)
    return (tag * (3000 // len(tag) + 1))[:3000]


def gen_of(v, what):
    """The generation of a whole value V, or None (reported) if it is not one."""
    tag = v.split('|', 1)[0]
    try:
        w, g = tag.rsplit('.', 1)
        g = int(g)
    except ValueError:
        fail('%s: not a value: %r' % (what, v[:60]))
        return None
    if v != val(w, g):
        fail('%s: a mixed or torn value: %r ... (tags %s)' % (what, v[:40], sorted(set(v.split('|')))[:4]))
        return None
    return (w, g)


def cellctl(db, *args):
    p = subprocess.run([CELLCTL, '--db', db, '--format=json'] + list(args), capture_output=True, text=True)
    if p.returncode != 0 or p.stderr:
        fail('cellctl %s: status %d, %s' % (' '.join(args), p.returncode, p.stderr.strip()))
        return []
    return [json.loads(line) for line in p.stdout.splitlines()]


def row_gen(row, what):
    """The one generation of ROW's newest cells (a JSON row), or None (reported) if they differ."""
    gens = {gen_of(c.get('value', ''), '%s %s:%s' % (what, c['family'], c['qualifier'])) for c in row['cells']}
    if len(gens) != 1 or None in gens:
        fail('%s: row %s is half written: generations %s' % (what, row['row'], sorted(g for g in gens if g)))
        return None
    return gens.pop()


def reader(db, mnt, stop, name):
    rows = files = 0
    while not os.path.exists(stop):
        for r in cellctl(db, 'read', 'c', 'prefix=gen_', 'cells-per-column=1', 'columns=cf:.*'):
            row_gen(r, 'read gen_')
            rows += 1
        for r in cellctl(db, 'lookup', 'c', 'gen_0', 'cells-per-column=1', 'columns=cf:.*'):
            row_gen(r, 'lookup gen_0')
            rows += 1
        for r in cellctl(db, 'read', 'c', 'prefix=imp_', 'cells-per-column=1'):
            row_gen(r, 'read imp_')
            rows += 1
        for d in sorted(os.listdir(os.path.join(mnt, 'c'))):
            for rel in ('cf/a', 'cf/d', 'cf/v'):
                p = os.path.join(mnt, 'c', d, rel)
                try:
                    with open(p) as f:
                        v = f.read()
                except FileNotFoundError:
                    continue
                files += 1
                if v or not d.startswith('m_'):  # (empty: between a shell writer's O_TRUNC and its close,
                    gen_of(v, 'the mount\'s ' + p)  # as on any file system)
    print('%s: %d rows, %d files checked' % (name, rows, files))


def final(db, mnt, writers, imports, mwriters):
    writers, imports, mwriters = int(writers), int(imports), int(mwriters)
    got = {r['row']: row_gen(r, 'final') for r in cellctl(db, 'read', 'c', 'cells-per-column=1', 'columns=cf:.*')}
    for w in range(writers):
        last = int(open(os.path.join(os.path.dirname(db), 'gen_%d.last' % w)).read())
        if got.get('gen_%d' % w) != ('gen_%d' % w, last):
            fail('gen_%d: newest %r, want generation %d' % (w, got.get('gen_%d' % w), last))
    imp = [r for r in got if r.startswith('imp_')]
    if len(imp) != 200 or any(got[r] != ('imp', imports) for r in imp):
        fail('imp_: %d rows, generations %s, want 200 at %d' % (len(imp), sorted({got[r] for r in imp if got[r]}), imports))
    for m in range(mwriters):
        last = int(open(os.path.join(os.path.dirname(db), 'm_%d.last' % m)).read())
        if got.get('m_%d' % m) != ('m_%d' % m, last):
            fail('m_%d: newest %r, want generation %d' % (m, got.get('m_%d' % m), last))
    print('final: %d rows, each one generation, the last written' % len(got))


cmd, args = sys.argv[1], sys.argv[2:]
{'reader': reader, 'final': final}[cmd](*args)
sys.exit(1 if bad else 0)
