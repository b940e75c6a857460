/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The one place where idgen adapts to PostgreSQL major versions.
 *
 * idgen supports PostgreSQL 15 through 18.  Every difference between those
 * versions that the code depends on is bridged here, so the rest of the
 * source reads as if there were a single server version.
 *
 * IDENTIFICATION
 *	  src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_COMPAT_H
#define IDGEN_COMPAT_H

#include "utils/datetime.h"

#if PG_VERSION_NUM < 150000
#error "idgen requires PostgreSQL 15 or later"
#endif

/*
 * PostgreSQL 18 lets a module report its name and version.
 */
#if PG_VERSION_NUM >= 180000
#define IDGEN_MODULE_MAGIC PG_MODULE_MAGIC_EXT(.name = "idgen", .version = "1.0")
#else
#define IDGEN_MODULE_MAGIC PG_MODULE_MAGIC
#endif

/*
 * PostgreSQL 16 added a DateTimeErrorExtra argument to DecodeDateTime().
 * We only need the error code, so the extra is local and discarded.
 */
static inline int
idgen_decode_datetime(char **field, int *ftype, int nf, int *dtype,
					  struct pg_tm *tm, fsec_t *fsec, int *tzp)
{
#if PG_VERSION_NUM >= 160000
	DateTimeErrorExtra extra;

	return DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp, &extra);
#else
	return DecodeDateTime(field, ftype, nf, dtype, tm, fsec, tzp);
#endif
}

#endif							/* IDGEN_COMPAT_H */
