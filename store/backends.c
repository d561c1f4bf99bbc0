/* backends.c — the backends cellfs is built with, by the scheme of the store names each serves
 * (backends.h). Adding a backend: its folder under store/, and a line here. */
#include "backends.h"
#include "lm.h"

const struct backend_entry backends[] = {
	{ "bigtable", NULL }, /* store/bigtable/: bigtable://PROJECT/INSTANCE, the module cellstore-bigtable.so */
	{ "", &lm_backend },  /* store/lmdb/: a directory */
	{ NULL, NULL },
};
