#!/bin/sh
# include_graph.sh STOREDIR [--edges] — the store's modules depend on each other in one direction only:
# fails, naming the cycle, if the graph among the modules of STOREDIR and its sub-folders (store/bigtable/
# ...; a module is known by its file names, which are unique across them) has one other than lm <-> schema
# (the LMDB store's struct holds the schema cache; the schema writes through its transactions).
#
# A module is x.c with x.h. Module A depends on module B when a file of A (a.c or a.h) includes "b.h",
# or a.c calls a function that b.c defines (calls through the public cellstore.h count, the header itself
# does not). A header without a .c of its name stands for the modules that define what it declares.
# A module may span files: x.c and every x_*.c that include "x_internal.h" (its private header) are one.
# With --edges, prints the edges ("a b" per line) and checks nothing.
dir=${1:?usage: include_graph.sh STOREDIR [--edges]}
edges_only=${2:-}
here=$(dirname "$0")
LC_ALL=C
export LC_ALL

find "$dir" -name '*.[ch]' | sort | while read -r f; do
	printf '@file %s\n' "${f##*/}"
	cat "$f"
done | awk -v edges_only="$edges_only" "$(cat "$here/cstrip.awk")"'
# strip() (cstrip.awk): code without comments and the contents of literals (they may name functions without
# calling them).
function module(file) { sub(/\.[ch]$/, "", file); return file }
function edge(a, b) {
	if (a in part) a = part[a]
	if (b in part) b = part[b]
	if (a == "lm" || a == "schema") a = "lm+schema"
	if (b == "lm" || b == "schema") b = "lm+schema"
	if (a != b) adj[a, b] = 1
}
function dfs(u,    v, k, i, s) {
	state[u] = 1
	path[++depth] = u
	for (k in adj) {
		split(k, e, SUBSEP)
		if (e[1] != u) continue
		v = e[2]
		if (state[v] == 1) {
			s = v
			for (i = depth; path[i] != v; i--) ;
			for (i++; i <= depth; i++) s = s " -> " path[i]
			cycle = s " -> " v
			return 1
		}
		if (!state[v] && dfs(v)) return 1
	}
	depth--
	state[u] = 2
	return 0
}
/^@file / { file = $2; ncode[file] = 0; incomment = 0; files[file] = 1; next }
{
	if (match($0, /^#include "[^"]+"/)) {
		h = substr($0, 11, RLENGTH - 11)
		sub(/.*\//, "", h)
		inc[file, h] = 1
	}
	code[file, ++ncode[file]] = strip($0)
}
END {
	for (f in files) if (f ~ /\.c$/) ismod[module(f)] = 1
	for (k in inc) {
		split(k, e, SUBSEP)
		if (e[2] ~ /_internal\.h$/) {
			m = e[2]
			sub(/_internal\.h$/, "", m)
			if (module(e[1]) != m && index(module(e[1]), m "_") != 1)
				continue
			part[module(e[1])] = m
			part[module(e[2])] = m
		}
	}
	# Functions each .c defines: a signature begun at column 0, then "{" alone at column 0.
	for (f in files) {
		if (f !~ /\.c$/) continue
		sig = ""
		for (i = 1; i <= ncode[f]; i++) {
			l = code[f, i]
			if (l == "{" && sig != "") {
				if (match(sig, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
					name = substr(sig, RSTART, RLENGTH)
					sub(/[ \t]*\($/, "", name)
					own[f, name] = 1
					if (sig !~ /^static /) defined[name] = module(f)
				}
				sig = ""
			} else if (l ~ /^[A-Za-z_]/ && l ~ /\(/ && l !~ /;[ \t]*$/ && l !~ /^(typedef|struct|enum|union)[ \t]/) {
				sig = l
			} else if (l ~ /;[ \t]*$/ || l ~ /^}/) {
				sig = ""
			}
		}
	}
	# Calls from each file: identifiers followed by "(" that another module defines.
	for (f in files) {
		for (i = 1; i <= ncode[f]; i++) {
			l = code[f, i]
			while (match(l, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
				name = substr(l, RSTART, RLENGTH)
				l = substr(l, RSTART + RLENGTH)
				sub(/[ \t]*\($/, "", name)
				if (name in defined && !((f, name) in own)) {
					if (f ~ /\.c$/) edge(module(f), defined[name])
					else declares[f, defined[name]] = 1
				}
			}
		}
	}
	# Includes: "x.h" is module x if x.c exists; else the modules whose functions it declares.
	for (k in inc) {
		split(k, e, SUBSEP)
		from = module(e[1])
		h = e[2]
		if (h == "cellstore.h")
			continue
		if (ismod[module(h)]) {
			edge(from, module(h))
			continue
		}
		for (d in declares) {
			split(d, g, SUBSEP)
			if (g[1] == h) edge(from, g[2])
		}
	}
	if (edges_only != "") {
		for (k in adj) {
			split(k, e, SUBSEP)
			print e[1], e[2]
		}
		exit 0
	}
	for (k in adj) {
		split(k, e, SUBSEP)
		nodes[e[1]] = 1
	}
	for (u in nodes)
		if (!state[u] && dfs(u)) {
			print "include_graph: a cycle among the store'"'"'s modules (lm and schema count as one): " cycle
			exit 1
		}
	n = 0
	for (k in adj) n++
	print "include_graph: " n " edges, no cycle beyond lm <-> schema"
}'
