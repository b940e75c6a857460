/*-------------------------------------------------------------------------
 *
 * keeper/shards.h
 *	  The keeper's side of instagram shard floors and releases
 *	  (keeper/shards.c), which the keeper's loop (keeper/main.c) calls.  Keeper
 *	  process only.
 *
 * IDENTIFICATION
 *	  src/keeper/shards.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef IDGEN_SHARDFLOORS_H
#define IDGEN_SHARDFLOORS_H

extern void idgen_keeper_floors_at_start(Oid relid);
extern void idgen_keeper_floors_while_running(Oid relid);
extern int	idgen_shard_floors_plan(void);
extern void idgen_shard_floors_no_table(void);
extern void idgen_shard_floors_write(Oid relid);
extern void idgen_shard_floors_publish(void);
extern void idgen_keeper_apply_shards(void);

#endif							/* IDGEN_SHARDFLOORS_H */
