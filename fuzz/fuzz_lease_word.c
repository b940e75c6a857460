/*-------------------------------------------------------------------------
 *
 * fuzz_lease_word.c
 *	  libFuzzer target: the lease word (src/idgen.h), the one place where a
 *	  server's claim on its node id is composed and decoded.
 *
 * The input is up to three little-endian 32-bit numbers: a word, a node
 * id and a generation.  Any word decodes to a node id within 0..1023 and
 * is valid exactly when its top bit is set; a valid word is recomposed
 * exactly from its node id and generation bits.  A word made from a node
 * id in range and a generation is valid, gives that node id back, and
 * differs from the word of the next generation (every claim's word must
 * differ from the last one's), whatever the generation.
 *
 * IDENTIFICATION
 *	  fuzz/fuzz_lease_word.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fuzz.h"
#include "idgen.h"

static uint32
take32(const uint8_t **data, size_t *size)
{
	uint32		v = 0;

	for (int i = 0; i < 4 && *size > 0; i++, (*data)++, (*size)--)
		v |= (uint32) **data << (8 * i);
	return v;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32		word = take32(&data, &size);
	int32		node = (int32) (take32(&data, &size) % (IDGEN_LEASE_NODE_MASK + 1));
	uint32		generation = take32(&data, &size);
	uint32		made;
	uint32		next;

	/* any word: a node id in range; valid exactly when the top bit is set */
	FUZZ_CHECK(idgen_lease_word_node(word) >= 0 &&
			   idgen_lease_word_node(word) <= (int32) IDGEN_LEASE_NODE_MASK,
			   "word %08x gives node %d", word, idgen_lease_word_node(word));
	FUZZ_CHECK(idgen_lease_word_valid(word) == ((word >> 31) != 0),
			   "word %08x: valid is %d", word, idgen_lease_word_valid(word));

	/* a valid word is its node id and generation bits, recomposed */
	if (idgen_lease_word_valid(word))
	{
		uint32		gen_bits = (word & ~(IDGEN_LEASE_VALID | IDGEN_LEASE_NODE_MASK)) /
			IDGEN_LEASE_GENERATION_ONE;

		FUZZ_CHECK(idgen_lease_word_make(idgen_lease_word_node(word), gen_bits) == word,
				   "word %08x recomposes to %08x", word,
				   idgen_lease_word_make(idgen_lease_word_node(word), gen_bits));
	}

	/* a made word: valid, its node id back, unlike the next claim's */
	made = idgen_lease_word_make(node, generation);
	next = idgen_lease_word_make(node, generation + 1);
	FUZZ_CHECK(idgen_lease_word_valid(made), "node %d, generation %u: word %08x not valid",
			   node, generation, made);
	FUZZ_CHECK(idgen_lease_word_node(made) == node,
			   "node %d, generation %u: word %08x gives node %d",
			   node, generation, made, idgen_lease_word_node(made));
	FUZZ_CHECK(made != next, "node %d: generations %u and %u give the same word %08x",
			   node, generation, generation + 1, made);
	return 0;
}
