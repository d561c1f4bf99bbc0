#!/bin/sh
# alloc_sites.sh STOREDIR — every allocation in the store library goes through store/mem.h, so that
# CS_FAULT_ALLOC reaches it (tests/unit/test_fault.c makes each one fail in turn). Lists any direct
# call of a libc allocator in store/ and its sub-folders (the Bigtable module too) other than in mem.c,
# and fails if there is one.
dir=${1:?usage: alloc_sites.sh STOREDIR}
found=$(grep -nE '(^|[^_[:alnum:]])(malloc|calloc|realloc|reallocarray|strdup|strndup|asprintf|vasprintf|aligned_alloc|posix_memalign|open_memstream)[[:space:]]*\(' \
	$(find "$dir" -name '*.c' | sort) | grep -v "^$dir/mem\.c:")
if [ -n "$found" ]; then
	echo "allocations that bypass store/mem.h (CS_FAULT_ALLOC cannot reach them):"
	echo "$found"
	exit 1
fi
