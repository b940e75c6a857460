/*-------------------------------------------------------------------------
 *
 * fuzz_sync_flag.c
 *	  libFuzzer target: how the keeper reads the walsenders' byte that says
 *	  whether synchronous standbys are in force (src/compat.h), whatever
 *	  minor release the running server is and whatever headers idgen was
 *	  built with.
 *
 * The input is a byte and a little-endian 32-bit server_version_num.  The
 * minor releases of May 2025 turned the byte from a bool (0 or 1:
 * sync_standbys_defined) into bits (1: initialised, 2: defined).  So, for
 * any version: 0 is never "defined"; on a server that writes bits, exactly
 * the byte with bit 2 is, so the initialised-only 1 of a server without
 * synchronous standbys does not make every durable commit wait for a
 * confirmation that never comes; on a server that writes the bool, 1 is.
 * Which servers write bits is checked against the releases themselves,
 * listed here apart from compat.h: each first minor of May 2025 and the
 * one before it, and every 18 or later.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_sync_flag.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fuzz.h"
#include "../src/compat.h"

/* the first minor release of each major that writes the bits */
static const int first_with_bits[][2] = {
	{13, 21}, {14, 18}, {15, 13}, {16, 9}, {17, 5}
};

/* the releases' own answer: does version v write the bits? */
static bool
writes_bits(int v)
{
	int			major = v / 10000;

	if (major >= 18)
		return true;
	for (int i = 0; i < lengthof(first_with_bits); i++)
		if (first_with_bits[i][0] == major)
			return v % 10000 >= first_with_bits[i][1];
	return false;
}

/* the field as a build against either header declares it */
typedef struct
{
	bool		sync_standbys_defined;	/* before May 2025 */
} OldCtl;
typedef struct
{
	uint8		sync_standbys_status;	/* since */
} NewCtl;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8		byte = size > 0 ? data[0] : 0;
	uint32		raw = 0;
	int			version;
	OldCtl		old_ctl;
	NewCtl		new_ctl;

	for (size_t i = 1; i < 5 && i < size; i++)
		raw |= (uint32) data[i] << (8 * (i - 1));
	/* server_version_num of 13.0 .. 29.99 */
	version = 130000 + (int) (raw % 170000);

	/* the byte as the server wrote it, whichever field a build reads it as */
	memcpy(&old_ctl, &byte, 1);
	memcpy(&new_ctl, &byte, 1);
	FUZZ_CHECK(idgen_byte_at(&old_ctl.sync_standbys_defined) == byte &&
			   idgen_byte_at(&new_ctl.sync_standbys_status) == byte,
			   "byte %u read back as %u through a bool", byte,
			   idgen_byte_at(&old_ctl.sync_standbys_defined));

	FUZZ_CHECK(idgen_sync_standbys_bits(version) == writes_bits(version),
			   "version %d: bits %d", version, idgen_sync_standbys_bits(version));
	FUZZ_CHECK(!idgen_sync_standbys_defined(0, version),
			   "version %d: byte 0 reads as defined", version);
	if (writes_bits(version))
	{
		FUZZ_CHECK(!idgen_sync_standbys_defined(1, version),
				   "version %d: initialised-only reads as defined", version);
		FUZZ_CHECK(idgen_sync_standbys_defined(3, version) &&
				   idgen_sync_standbys_defined(2, version),
				   "version %d: defined reads as not defined", version);
		FUZZ_CHECK(idgen_sync_standbys_defined(byte, version) == ((byte & 2) != 0),
				   "version %d: byte %u", version, byte);
	}
	else
	{
		FUZZ_CHECK(idgen_sync_standbys_defined(1, version),
				   "version %d: the bool true reads as not defined", version);
		FUZZ_CHECK(idgen_sync_standbys_defined(byte, version) == (byte != 0),
				   "version %d: byte %u", version, byte);
	}
	return 0;
}
