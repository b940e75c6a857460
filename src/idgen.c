/*-------------------------------------------------------------------------
 *
 * idgen.c
 *	  Module initialisation for idgen.
 *
 * The settings are defined whenever the library is loaded, so that the
 * decoders see the configured epoch even without preloading.  Shared
 * memory is only requested when the library is loaded through
 * shared_preload_libraries; that is the only moment it can be, and so is
 * registering the keeper background worker that makes IDs durable.
 *
 * IDENTIFICATION
 *	  src/idgen.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "compat.h"
#include "idgen.h"

IDGEN_MODULE_MAGIC;

/* fmgr.h declares this only from PostgreSQL 16 on */
extern PGDLLEXPORT void _PG_init(void);

void
_PG_init(void)
{
	idgen_define_gucs();

	if (!process_shared_preload_libraries_in_progress)
		return;

	idgen_shmem_install_hooks();
	idgen_keeper_register();
}
