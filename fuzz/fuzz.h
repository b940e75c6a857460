/*-------------------------------------------------------------------------
 *
 * fuzz.h
 *	  What every libFuzzer target of idgen's parsers shares.
 *
 * The targets call idgen's own base-layer code, compiled from src/ into
 * each target, outside any server: stubs.c stands in for the few backend
 * functions it calls.  The parsers return their problem rather than raise
 * it (an IdgenProblem, a check hook's complaint, NULL with an
 * IdgenEtcdResult saying why), and the targets check what they return.  Where code
 * raises an ERROR for bad input by design (the codecs, the clock's
 * arithmetic, the raising wrappers of the parsers), the target calls it
 * under FUZZ_TRY: the stub longjmps back to it, as the server would, and
 * FUZZ_TRY reports false.  An ERROR outside FUZZ_TRY aborts: the parsers
 * must not raise one.  Anything else that goes wrong, a sanitizer report,
 * an Assert (compiled in), or a property the target checks with
 * FUZZ_CHECK, aborts, so that libFuzzer keeps the input that did it.
 *
 * Memory palloc'd during one input is freed by fuzz_reset() at its end,
 * including what an ERROR left behind, so the leak checker sees only real
 * leaks.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_FUZZ_H
#define IDGEN_FUZZ_H

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>


/* SQLSTATE (as PostgreSQL packs it) and message of the last ERROR */
extern int	fuzz_last_sqlstate;
extern char fuzz_last_message[1024];

/* Free everything palloc'd since the last call. */
extern void fuzz_reset(void);

/* A palloc'd, NUL-terminated copy of the input, or NULL if it holds a NUL. */
extern char *fuzz_cstring(const unsigned char *data, size_t size);

/*
 * Run stmt; evaluates to true if it returned, false if it raised an ERROR
 * (whose SQLSTATE and message are then fuzz_last_sqlstate and
 * fuzz_last_message).  Locals that stmt assigns and the caller reads
 * after an ERROR must be volatile, as under PG_TRY.
 */
#define FUZZ_TRY(stmt) \
	({ \
		sigjmp_buf	fuzz_jb_; \
		sigjmp_buf *fuzz_saved_ = PG_exception_stack; \
		bool		fuzz_ok_ = true; \
		if (sigsetjmp(fuzz_jb_, 0) == 0) \
		{ \
			PG_exception_stack = &fuzz_jb_; \
			stmt; \
		} \
		else \
			fuzz_ok_ = false; \
		PG_exception_stack = fuzz_saved_; \
		fuzz_ok_; \
	})

/* A property of the code under test: abort with a message if it fails. */
#define FUZZ_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "idgen fuzz: property failed at %s:%d: %s\n  ", \
					__FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			abort(); \
		} \
	} while (0)

#endif							/* IDGEN_FUZZ_H */
