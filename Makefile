# idgen: time-ordered 64-bit unique IDs for PostgreSQL

MODULE_big = idgen
OBJS = \
	src/idgen.o \
	src/guc.o \
	src/shmem.o \
	src/clock.o \
	src/generator.o \
	src/keeper.o \
	src/storage.o \
	src/snowflake.o \
	src/instagram.o \
	src/decode.o \
	src/status.o \
	src/uuid.o \
	src/layout.o \
	src/registry.o \
	src/counter.o \
	src/codec.o \
	src/lease.o \
	src/etcd.o \
	src/node.o

# node-id leases talk to etcd over HTTP (etcd.c)
SHLIB_LINK += -lcurl

EXTENSION = idgen
DATA = idgen--1.0.sql idgen--1.0--1.1.sql
PGFILEDESC = "idgen - time-ordered 64-bit unique IDs"

# Each suite starts its own server preloaded with idgen (see idgen.conf),
# so "make installcheck" needs no running server.
REGRESS = markings status layout builders generate errors usage shards privileges \
	batch uuid named counter definitions grants codec convert
REGRESS_OPTS = --temp-instance=./tmp_check_regress --temp-config=idgen.conf
ISOLATION = interleave uuid_order
ISOLATION_OPTS = --temp-instance=./tmp_check_iso --temp-config=idgen.conf
TAP_TESTS = 1

EXTRA_CLEAN = tmp_check_regress tmp_check_iso output_iso

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies; every object sees the shared layout.
$(OBJS): src/idgen.h src/compat.h
src/etcd.o src/lease.o: src/etcd.h
src/keeper.o src/storage.o: src/storage.h
