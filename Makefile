# idgen: time-ordered 64-bit unique IDs for PostgreSQL

MODULE_big = idgen
OBJS = \
	src/idgen.o \
	src/base/builtin.o \
	src/base/clock.o \
	src/base/codec.o \
	src/base/counter.o \
	src/base/decode.o \
	src/base/guc.o \
	src/base/layout.o \
	src/base/ranges.o \
	src/shared/shmem.o \
	src/shared/slots.o \
	src/shared/node.o \
	src/shared/reservation.o \
	src/shared/generator.o \
	src/shared/storage.o \
	src/shared/rows.o \
	src/backend/snowflake.o \
	src/backend/instagram.o \
	src/backend/uuid.o \
	src/backend/named.o \
	src/backend/definitions.o \
	src/backend/status.o \
	src/backend/counterissue.o \
	src/keeper/main.o \
	src/keeper/load.o \
	src/keeper/counters.o \
	src/keeper/shards.o \
	src/lease/protocol.o \
	src/lease/record.o \
	src/lease/counters.o \
	src/lease/etcd.o

# Node-id leases talk to etcd over HTTP with libcurl (lease/etcd.c).  Without
# libcurl's development files (Debian: libcurl4-openssl-dev), or with
# "make WITH_LIBCURL=no", idgen builds without leases, and setting
# idgen.lease_endpoints is an error that says so.
WITH_LIBCURL ?= $(if $(shell curl-config --version 2>/dev/null || pkg-config --modversion libcurl 2>/dev/null),yes,no)
ifeq ($(WITH_LIBCURL),yes)
SHLIB_LINK += -lcurl
else
PG_CPPFLAGS += -DIDGEN_WITHOUT_LIBCURL
endif

# A test build ("make WITH_TEST_HOOKS=yes", as scripts/test-it.sh and
# scripts/sanitize.sh build) has the setting idgen.test_clock, which
# freezes idgen's clock for the TAP tests.  Never install one on a server
# that issues real IDs.
WITH_TEST_HOOKS ?= no
ifeq ($(WITH_TEST_HOOKS),yes)
PG_CPPFLAGS += -DIDGEN_TEST_HOOKS
endif

# The sources are in folders by process (src/README); every file names
# idgen's headers from src/.
PG_CPPFLAGS += -I$(srcdir)/src

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

EXTRA_CLEAN = tmp_check_regress tmp_check_iso output_iso src/.test-hooks

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# "make dist": the release, made from what git has committed (HEAD), in
# dist/ (which "make clean" leaves alone): idgen-VERSION.zip in PGXN's
# layout (one top directory idgen-VERSION/), idgen-VERSION.tar.gz of the
# same tree, and SHA256SUMS of both.  VERSION is META.json's; its
# major.minor must be idgen.control's default_version.  It refuses a
# checkout with uncommitted changes to tracked files, so that what ships
# is what is committed.  What does not ship is marked export-ignore in
# .gitattributes.  scripts/test-dist.sh tests the archives installed.
DIST_VERSION = $(shell perl -MJSON::PP -0777 -ne 'print decode_json($$_)->{version} // ""' META.json 2>/dev/null)
DIST_NAME = $(EXTENSION)-$(DIST_VERSION)
DIST_DIR = dist

.PHONY: dist
dist:
	@top=$$(git rev-parse --show-toplevel 2>/dev/null) && [ "$$(cd "$$top" && pwd -P)" = "$$(pwd -P)" ] && \
		git rev-parse --verify -q HEAD >/dev/null || \
		{ echo "make dist: $$(pwd -P) is not the top of a git checkout: the archives are made from what git has committed" >&2; exit 1; }
	@[ -n "$(DIST_VERSION)" ] || \
		{ echo "make dist: META.json has no version (or is not valid JSON)" >&2; exit 1; }
	@control=$$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" $(EXTENSION).control); \
	case "$(DIST_VERSION)" in \
		"$$control".[0-9]*) ;; \
		*) echo "make dist: META.json's version $(DIST_VERSION) is not $(EXTENSION).control's default_version ($$control) plus a patch level" >&2; exit 1 ;; \
	esac
	@git update-index -q --refresh >/dev/null 2>&1 || true; \
	if ! git diff-index --quiet HEAD --; then \
		echo "make dist: these tracked files have uncommitted changes; commit them (or stash them) first, so that what ships is what is committed:" >&2; \
		git status --short --untracked-files=no >&2; \
		exit 1; \
	fi
	@mkdir -p $(DIST_DIR)
	rm -f $(DIST_DIR)/$(DIST_NAME).zip $(DIST_DIR)/$(DIST_NAME).tar.gz $(DIST_DIR)/SHA256SUMS
	git archive --format=zip --prefix=$(DIST_NAME)/ -o $(DIST_DIR)/$(DIST_NAME).zip HEAD
	git archive --format=tar.gz --prefix=$(DIST_NAME)/ -o $(DIST_DIR)/$(DIST_NAME).tar.gz HEAD
	cd $(DIST_DIR) && sha256sum $(DIST_NAME).zip $(DIST_NAME).tar.gz >SHA256SUMS
	@echo "make dist: $(DIST_DIR)/$(DIST_NAME).zip, $(DIST_DIR)/$(DIST_NAME).tar.gz and $(DIST_DIR)/SHA256SUMS, from commit $$(git rev-parse --short HEAD)"

# PGXS tracks no header dependencies: every object depends on every
# header.  A list per header drifted (reservation.o and generator.o read
# registry.h's slots but were missing from it, so an incremental build
# after a change of the slot's layout read names from the wrong offsets).
$(OBJS): $(wildcard src/*.h src/*/*.h)

# A build with another WITH_TEST_HOOKS rebuilds every object: the stamp
# holds the setting, and is rewritten, newer than them, when it changes.
# (A missing prerequisite would not do: PGXS declares every target
# .SECONDARY.)
IDGEN_HOOKS_STAMP = src/.test-hooks
ifneq ($(shell cat $(IDGEN_HOOKS_STAMP) 2>/dev/null),$(WITH_TEST_HOOKS))
$(shell echo $(WITH_TEST_HOOKS) >$(IDGEN_HOOKS_STAMP))
endif
$(OBJS): $(IDGEN_HOOKS_STAMP)
# ("make clean all" removes the stamp written while the Makefile was read)
$(IDGEN_HOOKS_STAMP):
	echo $(WITH_TEST_HOOKS) >$@
