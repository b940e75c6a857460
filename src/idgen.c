/*-------------------------------------------------------------------------
 *
 * idgen.c
 *	  Module initialisation for idgen.
 *
 * The settings are defined whenever the library is loaded, so that the
 * decoders see the configured epoch even without preloading.  Shared
 * memory is only requested when the library is loaded through
 * shared_preload_libraries; that is the only moment it can be, and so is
 * registering the keeper background worker that makes IDs durable, and
 * hooking the end of every statement (the executor's run, finish and
 * end, a utility command's end), where the counter values a statement
 * took ahead of the durable reservation are made durable (backend/counterissue.c).
 * The object access hook sees every table as it is dropped, so that no
 * statement drops the named generators' definitions with the extension
 * silently (idgen_check_drop_registry).
 *
 * IDENTIFICATION
 *	  src/idgen.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/dependency.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class_d.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/utility.h"

#include "compat.h"
#include "idgen.h"

IDGEN_MODULE_MAGIC;

/* fmgr.h declares this only from PostgreSQL 16 on */
extern PGDLLEXPORT void _PG_init(void);

static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;
static object_access_hook_type prev_object_access_hook = NULL;

/*
 * Whether the utility statement running (the innermost) said CASCADE:
 * the object access hook, which sees each object as it is dropped, does
 * not know.  Set by each utility statement, back to its caller's after.
 */
static bool utility_cascade = false;

/* DROP ... CASCADE and DROP OWNED ... CASCADE */
static bool
idgen_statement_cascades(Node *parsetree)
{
	if (IsA(parsetree, DropStmt))
		return ((DropStmt *) parsetree)->behavior == DROP_CASCADE;
	if (IsA(parsetree, DropOwnedStmt))
		return ((DropOwnedStmt *) parsetree)->behavior == DROP_CASCADE;
	return false;
}

/*
 * Every drop of a table goes by here, before it is deleted: the named
 * generators' table is kept from going silently (backend/definitions.c), whatever
 * statement drops the extension.
 */
static void
idgen_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access == OAT_DROP && classId == RelationRelationId && subId == 0 &&
		(((ObjectAccessDrop *) arg)->dropflags & PERFORM_DELETION_INTERNAL) == 0)
		idgen_check_drop_registry(objectId, utility_cascade);
}

/*
 * After each run: a portal returning rows may stay open after its rows
 * have been sent and the client told the statement is complete (the
 * extended protocol's Execute, a cursor's FETCH), and it is ended only
 * later, so the values it took are waited for before its completion or
 * suspension is reported.
 */
static void
idgen_ExecutorRun(IDGEN_EXECUTOR_RUN_PARAMS)
{
	if (prev_ExecutorRun)
		prev_ExecutorRun(IDGEN_EXECUTOR_RUN_ARGS);
	else
		standard_ExecutorRun(IDGEN_EXECUTOR_RUN_ARGS);
	idgen_counter_statement_end();
}

/* after AFTER triggers, which run in ExecutorFinish */
static void
idgen_ExecutorFinish(QueryDesc *queryDesc)
{
	if (prev_ExecutorFinish)
		prev_ExecutorFinish(queryDesc);
	else
		standard_ExecutorFinish(queryDesc);
	idgen_counter_statement_end();
}

static void
idgen_ExecutorEnd(QueryDesc *queryDesc)
{
	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	idgen_counter_statement_end();
}

/*
 * After a utility command, except the transaction commands: COMMIT and
 * PREPARE wait in the commit's own callback, and ROLLBACK has nothing to
 * make durable (what a rolled-back statement took stays pending for the
 * next statement, backend/counterissue.c).
 */
static void
idgen_ProcessUtility(PlannedStmt *pstmt, const char *queryString,
					 bool readOnlyTree, ProcessUtilityContext context,
					 ParamListInfo params, QueryEnvironment *queryEnv,
					 DestReceiver *dest, QueryCompletion *qc)
{
	bool		outer_cascade = utility_cascade;

	/*
	 * Back to the caller's whatever happens: an error caught inside a
	 * statement (an event trigger's, PL/pgSQL's EXCEPTION) must not leave
	 * a nested statement's CASCADE for the rest of it.
	 */
	utility_cascade = idgen_statement_cascades(pstmt->utilityStmt);
	PG_TRY();
	{
		if (prev_ProcessUtility)
			prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		utility_cascade = outer_cascade;
	}
	PG_END_TRY();
	if (!IsA(pstmt->utilityStmt, TransactionStmt))
		idgen_counter_statement_end();
}

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* idgen's shared memory: IdgenShared (shared/shmem.c) and the named slots (shared/slots.c) */
static void
idgen_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	idgen_shmem_request();
	RequestAddinShmemSpace(idgen_registry_shmem_size());
}

static void
idgen_shmem_startup_hook(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	idgen_shmem_init();
	idgen_registry_shmem_init();
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	idgen_define_gucs();
	idgen_builtin_init();

	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = idgen_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = idgen_shmem_startup_hook;
	idgen_keeper_register();

	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = idgen_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = idgen_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = idgen_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = idgen_ProcessUtility;
	prev_object_access_hook = object_access_hook;
	object_access_hook = idgen_object_access;
}
