--
-- Text forms of IDs: idgen_to_text() and idgen_from_text() are exact
-- inverses over 0 .. 2^63-1, fixed width, and the text sorts like the
-- number under COLLATE "C".  Properties over a million random values per
-- alphabet plus every edge; exact errors with their SQLSTATEs.
--
-- (the suite may have created it already: no NOTICE either way)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS idgen;
RESET client_min_messages;
\set SHOW_CONTEXT never
SELECT setseed(0.4242);

-- Values: 0, 1, 2^63-1, every 2^k and its neighbours, every power of each
-- base and its neighbours, and 1,000,000 uniformly random non-negative
-- bigints (two random halves: random() alone has only 52 bits).  Repeats
-- are possible (and harmless): the order checks below allow equal values.
CREATE TEMP TABLE v AS
SELECT x FROM (
    SELECT unnest(ARRAY[0, 1, 9223372036854775807, 9223372036854775806]::bigint[]) AS x
    UNION ALL
    SELECT (1::bigint << k) + d FROM generate_series(0, 62) k, generate_series(-1, 1) d
     WHERE (k < 62 OR d < 1)
    UNION ALL
    SELECT (b::numeric ^ k)::bigint + d
      FROM (VALUES (32, 12), (62, 10)) AS bases(b, kmax),
           generate_series(0, 12) k, generate_series(-1, 1) d
     WHERE k <= kmax
    UNION ALL
    SELECT (floor(random() * 2147483648)::bigint << 32)
           | floor(random() * 4294967296)::bigint
      FROM generate_series(1, 1000000)
) s
WHERE x >= 0;
SELECT count(*) > 1000000 AS enough_values,
       min(x) = 0 AS has_zero, max(x) = 9223372036854775807 AS has_max,
       count(*) FILTER (WHERE x >= 4611686018427387904) > 400000 AS top_bit_used
  FROM v;

-- round trip and fixed width, for both alphabets: decode(encode(x)) = x
-- for every value (so encode is one-to-one)
SELECT a.alphabet,
       count(*) FILTER (WHERE idgen_from_text(e, a.alphabet) <> x) AS not_inverse,
       min(length(e)) AS min_width, max(length(e)) AS max_width
  FROM (VALUES ('crockford32'), ('base62')) AS a(alphabet),
       LATERAL (SELECT x, idgen_to_text(x, a.alphabet) AS e FROM v) s
 GROUP BY a.alphabet
 ORDER BY a.alphabet;

-- encodings use only the alphabet's canonical symbols (crockford32: upper
-- case, never I L O U), on a sample
SELECT count(*) FILTER (WHERE idgen_to_text(x) !~ '^[0-9A-HJKMNP-TV-Z]{13}$') AS c32_foreign,
       count(*) FILTER (WHERE idgen_to_text(x, 'base62') !~ '^[0-9A-Za-z]{11}$') AS b62_foreign
  FROM v WHERE x % 16 = 0;

-- the default alphabet is crockford32
SELECT count(*) FILTER (WHERE idgen_to_text(x) <> idgen_to_text(x, 'crockford32')
                           OR idgen_from_text(idgen_to_text(x)) <> x) AS default_differs
  FROM v WHERE x % 16 = 0;

-- ORDER BY the text COLLATE "C" is ORDER BY the number: in text order the
-- numbers never decrease, and a permutation of the values that never
-- decreases is their numeric order
SELECT 'crockford32' AS alphabet,
       bool_and(x >= prev) AS text_order_is_numeric_order, count(*) > 1000000 AS all_rows
  FROM (SELECT x, lag(x) OVER (ORDER BY idgen_to_text(x, 'crockford32') COLLATE "C") AS prev
          FROM v) s
UNION ALL
SELECT 'base62',
       bool_and(x >= prev), count(*) > 1000000
  FROM (SELECT x, lag(x) OVER (ORDER BY idgen_to_text(x, 'base62') COLLATE "C") AS prev
          FROM v) s;

-- fixed points that any other implementation can check
SELECT x, idgen_to_text(x) AS crockford32, idgen_to_text(x, 'base62') AS base62
  FROM unnest(ARRAY[0, 1, 31, 32, 61, 62, 1234567890123456789,
                    9223372036854775807]::bigint[]) AS x;

-- crockford32 decoding per Crockford's spec: case-insensitive, O reads as
-- 0, I and L as 1, hyphens ignored wherever they are
SELECT count(*) FILTER (WHERE idgen_from_text(lower(e)) <> x) AS lower_case_differs,
       count(*) FILTER (WHERE idgen_from_text(translate(e, '0', 'O')) <> x) AS o_differs,
       count(*) FILTER (WHERE idgen_from_text(translate(e, '01', 'oI')) <> x) AS i_differs,
       count(*) FILTER (WHERE idgen_from_text(translate(e, '1', 'l')) <> x) AS l_differs,
       count(*) FILTER (WHERE idgen_from_text(regexp_replace(e, '(....)', '\1-', 'g')) <> x) AS grouped_differs,
       count(*) FILTER (WHERE idgen_from_text('-' || e || '--') <> x) AS hyphens_differ
  FROM (SELECT x, idgen_to_text(x) AS e FROM v WHERE x % 8 = 0) s;
SELECT idgen_from_text('7zzz-zzzz-zzzz-z') = 9223372036854775807 AS grouped_max;

-- base62 is case-sensitive: swapping case changes the value
SELECT idgen_from_text('0000000000a', 'base62') AS lower_a,
       idgen_from_text('0000000000A', 'base62') AS upper_a;

-- alphabet names match case-insensitively
SELECT idgen_to_text(62, 'BASE62') = idgen_to_text(62, 'base62') AS name_case_ignored,
       idgen_from_text('0000000000010', 'Crockford32') AS thirty_two;

-- NULL in, NULL out (STRICT)
SELECT idgen_to_text(NULL) IS NULL AS n1, idgen_from_text(NULL) IS NULL AS n2,
       idgen_to_text(1, NULL) IS NULL AS n3;

--
-- Errors
--
-- a negative ID has no text form (22023, as for the decoders)
SELECT idgen_to_text(-1);
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_to_text(-9223372036854775808, 'base62');
\echo :LAST_ERROR_SQLSTATE
-- unknown alphabet (22023, the hint lists the alphabets)
SELECT idgen_to_text(1, 'base64');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('0000000000001', '');
\echo :LAST_ERROR_SQLSTATE
-- wrong length (22P02)
SELECT idgen_from_text('');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('000000000001');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('00000000000001');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('-------------');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('0000000001', 'base62');
\echo :LAST_ERROR_SQLSTATE
-- a character outside the alphabet (22P02): U, the check symbols, spaces,
-- a multibyte character, a hyphen in base62
SELECT idgen_from_text('000000000000U');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('000000000000*');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text(' 000000000001');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('00000000000é1');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('00000-000001', 'base62');
\echo :LAST_ERROR_SQLSTATE
-- beyond 2^63-1 (22P02)
SELECT idgen_from_text('8000000000000');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('zzzzzzzzzzzzz');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('AzL8n0Y58m8', 'base62');
\echo :LAST_ERROR_SQLSTATE
SELECT idgen_from_text('zzzzzzzzzzz', 'base62');
\echo :LAST_ERROR_SQLSTATE
-- a length error is reported even when the value would also overflow
SELECT idgen_from_text('zzzzzzzzzzzzzz');
\echo :LAST_ERROR_SQLSTATE
-- the largest values decode
SELECT idgen_from_text('7ZZZZZZZZZZZZ') = 9223372036854775807 AS c32_max,
       idgen_from_text('AzL8n0Y58m7', 'base62') = 9223372036854775807 AS b62_max;

-- usable in an expression index (IMMUTABLE), e.g. to look rows up by text
CREATE TEMP TABLE orders (id bigint PRIMARY KEY, item text);
CREATE INDEX ON orders ((idgen_to_text(id)));
INSERT INTO orders SELECT x, 'item' FROM v WHERE x % 1000 = 7 LIMIT 100;
SELECT count(*) = 100 AS all_found
  FROM orders o JOIN (SELECT idgen_to_text(id) AS t FROM orders) s
    ON idgen_to_text(o.id) = s.t;
