"""The server-side function of the PostgreSQL ledger that writes registrations.

Created by migration ``0013_register_statement`` (:mod:`fetchledger.store.migrations`;
``0009_register_function`` created its first form, and 0013's is kept as it was:
``0018_counter_queue`` and ``0019_async_numbering`` give it its changes since, and
``0021_fewer_checks`` its form of today, ``REGISTER_FUNCTION_0021``), called by
:mod:`fetchledger.store.pg_register`: one statement, in a transaction of its own
(autocommit), writes a round of registrations.

``fetchledger_register(p_lock_timeout, p_key, p_now, p_regs, p_texts, p_raws, p_chunks,
p_failed)`` sets the transaction's ``lock_timeout`` (so that a pooler may share the
connection: nothing is set on the session), and takes the registrations as a JSON array
(``p_regs``; their texts, raw bytes and text chunks beside it, each registration's
``chunks`` counting its own, in order) and the failed attempts (``p_failed``, ``[kind,
locator, status, message]`` each). For each registration, in order, it finds the source
by its names:

- a source that exists gets its new version (or none, when the text and raw bytes are
  unchanged), its quotes and search hits there and then, and its answer;
- a new source gets only its heavy rows there: its passages and text chunks, under the
  id its version takes from the version sequence (since 0021 they have no foreign key:
  the version is written later); a large version (text and raw bytes over
  ``_LATE_VERSION`` bytes, which the server would TOAST) is written there too, waiting
  for its source under a key no source has (``-(p_key + n)``; the version's foreign key
  to its source is deferred, checked at the commit).

Then, last, it takes the id counter for the new sources — writers wait for each other
only from here to their commit — and writes the few small rows that name their ids
(since 0021 one statement a new source: the source, its small version, its quotes, its
names and, in a call of one registration, its ok attempt).
Writers queue for the counter on a lock of their own (an advisory lock named after the
ledger's counter table, since 0018) before they update its row: a writer that waited
for the row itself found it updated by the one before and evaluated its update again
on the row's new version, at every hand-over (with 16 writers on 2 cores, about a fifth
of the server's CPU per registration, benchmarks/shared_ledger.py). The rows it writes:
source, names (``alias``), the version's source, quotes, search hits; then every ok
attempt in order, and the failed ones. A name another writer registered meanwhile is a
unique violation: the statement is rolled back and run again, and then finds it. Each
answer is built from what the function wrote or read (no query after the counter): one
row per registration, its ordinal first (known sources are answered before new ones),
then the version, whether source and version are new, then the source (the columns of
``store.protocol.SOURCE_COLUMNS``). Its statements are planned once per connection
(PL/pgSQL keeps their plans) and stay simple enough for the plan kept to be good.

Since 0019 its transaction commits without waiting for the disk (``ASYNC_COMMIT``): the
counter's lock is released as soon as the commit is written, not once it is flushed, so
writers of new sources no longer take turns at the server's flush. The caller sends
``FLUSH`` after it (same round trip) and answers once that is done: WAL is flushed in
order, so every registration committed before is then durable too.
"""

from __future__ import annotations

__all__ = ["ASYNC_COMMIT", "COUNTER_QUEUE", "FLUSH", "REGISTER_FUNCTION",
           "REGISTER_FUNCTION_0009", "REGISTER_FUNCTION_0013", "REGISTER_FUNCTION_0018",
           "REGISTER_FUNCTION_0019", "REGISTER_FUNCTION_0021"]

REGISTER_FUNCTION_0013 = """
CREATE FUNCTION fetchledger_register(
    p_lock_timeout text, p_key bigint, p_now text, p_regs jsonb, p_texts text[],
    p_raws bytea[], p_chunks bytea[], p_failed jsonb)
RETURNS TABLE (ordinal integer, version_id bigint, new_source boolean, new_version boolean,
               source_id bigint, kind text, display text, title text, retrieved_at text,
               text_sha256 text, versions bigint, number integer, first_retrieved text,
               last_retrieved text, site text, author text, published text, meta text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
    n integer := jsonb_array_length(p_regs);
    r jsonb;
    loc text;
    at text;
    names text[];
    sid bigint;
    vid bigint;
    num integer;
    changed boolean;
    prev_id bigint;
    prev_number integer;
    prev_text text;
    prev_raw text;
    prev_at text;
    prev_meta text;
    chunk_at integer := 0;
    chunk_count integer;
    sids bigint[] := '{}';
    vids bigint[] := '{}';
    nums integer[] := '{}';
    fresh boolean[] := '{}';
    new_count integer := 0;
    base bigint;
BEGIN
    -- this statement's transaction waits for a lock (the counter row) this long at most
    PERFORM set_config('lock_timeout', p_lock_timeout, true);
    FOR i IN 1 .. n LOOP
        r := p_regs -> (i - 1);
        loc := r ->> 'locator';
        at := r ->> 'at';
        changed := true;
        prev_id := NULL;
        prev_number := 0;
        -- the source holding the canonical locator, else the oldest holding another name
        SELECT a.source_id INTO sid FROM alias a WHERE a.locator = loc;
        IF sid IS NULL AND jsonb_array_length(r -> 'names') > 1 THEN
            names := ARRAY(SELECT jsonb_array_elements_text(r -> 'names'));
            SELECT min(a.source_id) INTO sid FROM alias a WHERE a.locator = ANY(names);
        END IF;
        IF sid IS NOT NULL THEN
            IF jsonb_array_length(r -> 'names') > 1 THEN
                INSERT INTO alias (locator, source_id)
                SELECT x.name, sid FROM jsonb_array_elements_text(r -> 'names') AS x(name)
                ORDER BY x.name ON CONFLICT (locator) DO NOTHING;
            END IF;
            -- locked first, then read: the version a writer just committed is seen
            SELECT s.latest_version INTO prev_id FROM source s WHERE s.id = sid FOR UPDATE;
            SELECT v.number, v.text_sha256, v.raw_sha256, v.retrieved_at, v.meta
            INTO prev_number, prev_text, prev_raw, prev_at, prev_meta
            FROM version v WHERE v.id = prev_id;
            changed := prev_id IS NULL OR prev_text IS DISTINCT FROM r ->> 'text_sha256'
                       OR prev_raw IS DISTINCT FROM r ->> 'raw_sha256';
        ELSE
            sid := -(p_key + i);  -- numbered below
            new_count := new_count + 1;
        END IF;
        chunk_count := (r ->> 'chunks')::integer;
        IF changed THEN
            num := coalesce(prev_number, 0) + 1;
            -- a new source's version names it by its key until it is numbered (the
            -- foreign key, deferred, is checked at the commit)
            INSERT INTO version (source_id, number, text_sha256, raw_sha256, retrieved_at,
                                 extractor, extractor_version, meta, pages, text, raw,
                                 raw_size, raw_stored)
            VALUES (sid, num, r ->> 'text_sha256', r ->> 'raw_sha256', at,
                    r ->> 'extractor', r ->> 'extractor_version', r ->> 'meta',
                    r ->> 'pages', p_texts[i], p_raws[i], (r ->> 'raw_size')::bigint,
                    (r ->> 'raw_stored')::bigint)
            RETURNING id INTO vid;
            IF prev_id IS NOT NULL THEN  -- only the latest version is searched
                UPDATE passage SET terms = NULL WHERE version_id = prev_id;
            END IF;
            INSERT INTO passage (version_id, start, "end", page, page_label, terms, ordinal,
                                 heading)
            SELECT vid, (x.p ->> 0)::integer, (x.p ->> 1)::integer, (x.p ->> 2)::integer,
                   x.p ->> 3, array_to_tsvector(string_to_array(x.p ->> 4, ' ')), x.k,
                   x.p ->> 5
            FROM jsonb_array_elements(r -> 'passages') WITH ORDINALITY AS x(p, k);
            IF chunk_count > 0 THEN
                INSERT INTO text_chunk (version_id, n, body)
                SELECT vid, c.k - 1, c.body
                FROM unnest(p_chunks[chunk_at + 1 : chunk_at + chunk_count])
                     WITH ORDINALITY AS c(body, k);
            END IF;
        ELSE
            num := prev_number;
            vid := prev_id;
        END IF;
        chunk_at := chunk_at + chunk_count;
        IF sid > 0 THEN  -- a known source: its rows now, and its answer
            UPDATE source SET latest_version = vid,
                last_retrieved = CASE WHEN (r ->> 'retrieved')::boolean
                                      THEN greatest(last_retrieved, at)
                                      ELSE last_retrieved END,
                title = coalesce(r ->> 'title', title), site = coalesce(r ->> 'site', site),
                author = coalesce(r ->> 'author', author),
                published = coalesce(r ->> 'published', published)
            WHERE id = sid
            RETURNING kind, display, title, first_retrieved, last_retrieved, site, author,
                      published
            INTO kind, display, title, first_retrieved, last_retrieved, site, author,
                 published;
            IF jsonb_array_length(r -> 'quotes') > 0 THEN
                INSERT INTO quote (source_id, version_id, start, "end", page, page_label,
                                   text, first_at)
                SELECT sid, vid, (x.q ->> 0)::integer, (x.q ->> 1)::integer,
                       (x.q ->> 2)::integer, x.q ->> 3, x.q ->> 4, p_now
                FROM jsonb_array_elements(r -> 'quotes') AS x(q)
                ON CONFLICT (version_id, start, "end") DO NOTHING;
            END IF;
            IF jsonb_array_length(r -> 'hits') > 0 THEN
                INSERT INTO search_hit (source_id, query, engine, rank, title, snippet, at)
                SELECT sid, x.h ->> 0, x.h ->> 1, (x.h ->> 2)::integer, x.h ->> 3,
                       x.h ->> 4, p_now
                FROM jsonb_array_elements(r -> 'hits') AS x(h)
                ON CONFLICT (source_id, query, engine, rank) DO NOTHING;
            END IF;
            SELECT count(*) INTO versions FROM version c WHERE c.source_id = sid;
            ordinal := i; version_id := vid; new_source := false; new_version := changed;
            source_id := sid; number := num;
            IF changed THEN
                retrieved_at := at; text_sha256 := r ->> 'text_sha256'; meta := r ->> 'meta';
            ELSE
                retrieved_at := prev_at; text_sha256 := prev_text; meta := prev_meta;
            END IF;
            RETURN NEXT;
        END IF;
        sids := sids || sid;
        vids := vids || vid;
        nums := nums || num;
        fresh := fresh || (sid < 0);
    END LOOP;
    IF new_count > 0 THEN
        -- the id counter, last: writers wait for each other only from here to the commit
        UPDATE counter SET value = value + new_count WHERE name = 'source'
        RETURNING value - new_count INTO base;
        FOR i IN 1 .. n LOOP
            CONTINUE WHEN NOT fresh[i];
            r := p_regs -> (i - 1);
            base := base + 1;
            sids[i] := base;
            at := r ->> 'at';
            INSERT INTO source (id, kind, locator, display, title, site, author, published,
                                first_retrieved, last_retrieved, latest_version)
            VALUES (base, r ->> 'kind', r ->> 'locator', r ->> 'display', r ->> 'title',
                    r ->> 'site', r ->> 'author', r ->> 'published', at, at, vids[i]);
            IF jsonb_array_length(r -> 'names') = 1 THEN
                INSERT INTO alias (locator, source_id) VALUES (r ->> 'locator', base);
            ELSE
                INSERT INTO alias (locator, source_id)
                SELECT x.name, base FROM jsonb_array_elements_text(r -> 'names') AS x(name)
                ORDER BY x.name;
            END IF;
            UPDATE version SET source_id = base WHERE id = vids[i];
            IF jsonb_array_length(r -> 'quotes') > 0 THEN
                INSERT INTO quote (source_id, version_id, start, "end", page, page_label,
                                   text, first_at)
                SELECT base, vids[i], (x.q ->> 0)::integer, (x.q ->> 1)::integer,
                       (x.q ->> 2)::integer, x.q ->> 3, x.q ->> 4, p_now
                FROM jsonb_array_elements(r -> 'quotes') AS x(q);
            END IF;
            IF jsonb_array_length(r -> 'hits') > 0 THEN
                INSERT INTO search_hit (source_id, query, engine, rank, title, snippet, at)
                SELECT base, x.h ->> 0, x.h ->> 1, (x.h ->> 2)::integer, x.h ->> 3,
                       x.h ->> 4, p_now
                FROM jsonb_array_elements(r -> 'hits') AS x(h)
                ON CONFLICT (source_id, query, engine, rank) DO NOTHING;
            END IF;
            ordinal := i; version_id := vids[i]; new_source := true; new_version := true;
            source_id := base; kind := r ->> 'kind'; display := r ->> 'display';
            title := r ->> 'title'; retrieved_at := at; text_sha256 := r ->> 'text_sha256';
            versions := 1; number := 1; first_retrieved := at; last_retrieved := at;
            site := r ->> 'site'; author := r ->> 'author'; published := r ->> 'published';
            meta := r ->> 'meta';
            RETURN NEXT;
        END LOOP;
    END IF;
    FOR i IN 1 .. n LOOP  -- every retrieval's ok attempt, in order, then the failed ones
        r := p_regs -> (i - 1);
        CONTINUE WHEN NOT (r ->> 'retrieved')::boolean;
        INSERT INTO attempt (kind, locator, at, status, message, source_id)
        VALUES (r ->> 'kind', r ->> 'display', r ->> 'at', 'ok',
                format('registered as [%s] version %s', sids[i], nums[i]), sids[i]);
    END LOOP;
    IF jsonb_array_length(p_failed) > 0 THEN
        INSERT INTO attempt (kind, locator, at, status, message)
        SELECT f.a ->> 0, f.a ->> 1, p_now, f.a ->> 2, f.a ->> 3
        FROM jsonb_array_elements(p_failed) WITH ORDINALITY AS f(a, k) ORDER BY f.k;
    END IF;
END
$fn$;
"""

# The counter's row update as 0013 wrote it, and the queue 0018 puts before it: one lock
# per ledger (the two-key form, apart from the one-key locks of migrations and claims;
# its second key the counter table's oid, so ledgers in two schemas of one database do
# not queue behind each other), released with the transaction as the row's lock is.
_COUNTER_UPDATE = """
        UPDATE counter SET value = value + new_count WHERE name = 'source'
        RETURNING value - new_count INTO base;"""
COUNTER_QUEUE = """
        PERFORM pg_advisory_xact_lock(hashtext('fetchledger.counter'),
                                      'counter'::regclass::oid::integer);"""
assert REGISTER_FUNCTION_0013.count(_COUNTER_UPDATE) == 1
# as migration 0018_counter_queue made it (0019 replaces it)
REGISTER_FUNCTION_0018 = REGISTER_FUNCTION_0013.replace(
    _COUNTER_UPDATE, COUNTER_QUEUE + _COUNTER_UPDATE).replace(
    "CREATE FUNCTION", "CREATE OR REPLACE FUNCTION")

# 0019: the registration's transaction commits without waiting for its WAL to reach the
# disk, so the counter (and a known source's row) is handed on at once instead of after a
# flush; the writer waits for the flush in a transaction of its own (FLUSH) sent with
# it, outside every lock, where the flushes of many writers are one.
_LOCK_TIMEOUT = """
    PERFORM set_config('lock_timeout', p_lock_timeout, true);"""
ASYNC_COMMIT = """
    PERFORM set_config('lock_timeout', p_lock_timeout, true),
            set_config('synchronous_commit', 'off', true);  -- FLUSH follows"""
assert REGISTER_FUNCTION_0018.count(_LOCK_TIMEOUT) == 1
# as migration 0019_async_numbering made it (0021 replaces it)
REGISTER_FUNCTION_0019 = REGISTER_FUNCTION_0018.replace(_LOCK_TIMEOUT, ASYNC_COMMIT)


# 0021: a new source's small version is written once it is numbered, with its id, rather
# than under its key and updated then (one statement, one row version and two index
# entries less; its passages and chunks take its id from the sequence beforehand, as their
# foreign keys are gone: 0021 drops them); a large one (text and raw bytes over
# _LATE_VERSION bytes, which would be TOASTed) is still written before the counter, so
# that no writer holds the counter while its megabytes are written. The rows naming a
# new source's id are one statement (source, version, quotes, names).
_LATE_VERSION = 2000
REGISTER_FUNCTION_0021 = """
CREATE OR REPLACE FUNCTION fetchledger_register(
    p_lock_timeout text, p_key bigint, p_now text, p_regs jsonb, p_texts text[],
    p_raws bytea[], p_chunks bytea[], p_failed jsonb)
RETURNS TABLE (ordinal integer, version_id bigint, new_source boolean, new_version boolean,
               source_id bigint, kind text, display text, title text, retrieved_at text,
               text_sha256 text, versions bigint, number integer, first_retrieved text,
               last_retrieved text, site text, author text, published text, meta text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
    n integer := jsonb_array_length(p_regs);
    r jsonb;
    loc text;
    at text;
    names text[];
    sid bigint;
    vid bigint;
    num integer;
    changed boolean;
    prev_id bigint;
    prev_number integer;
    prev_text text;
    prev_raw text;
    prev_at text;
    prev_meta text;
    chunk_at integer := 0;
    chunk_count integer;
    sids bigint[] := '{}';
    vids bigint[] := '{}';
    nums integer[] := '{}';
    fresh boolean[] := '{}';
    late boolean[] := '{}';
    later boolean;
    new_count integer := 0;
    base bigint;
BEGIN
    PERFORM set_config('lock_timeout', p_lock_timeout, true),
            set_config('synchronous_commit', 'off', true);  -- FLUSH follows
    FOR i IN 1 .. n LOOP
        r := p_regs -> (i - 1);
        loc := r ->> 'locator';
        at := r ->> 'at';
        changed := true;
        later := false;
        prev_id := NULL;
        prev_number := 0;
        -- the source holding the canonical locator, else the oldest holding another name
        SELECT a.source_id INTO sid FROM alias a WHERE a.locator = loc;
        IF sid IS NULL AND jsonb_array_length(r -> 'names') > 1 THEN
            names := ARRAY(SELECT jsonb_array_elements_text(r -> 'names'));
            SELECT min(a.source_id) INTO sid FROM alias a WHERE a.locator = ANY(names);
        END IF;
        IF sid IS NOT NULL THEN
            IF jsonb_array_length(r -> 'names') > 1 THEN
                INSERT INTO alias (locator, source_id)
                SELECT x.name, sid FROM jsonb_array_elements_text(r -> 'names') AS x(name)
                ORDER BY x.name ON CONFLICT (locator) DO NOTHING;
            END IF;
            -- locked first, then read: the version a writer just committed is seen
            SELECT s.latest_version INTO prev_id FROM source s WHERE s.id = sid FOR UPDATE;
            SELECT v.number, v.text_sha256, v.raw_sha256, v.retrieved_at, v.meta
            INTO prev_number, prev_text, prev_raw, prev_at, prev_meta
            FROM version v WHERE v.id = prev_id;
            changed := prev_id IS NULL OR prev_text IS DISTINCT FROM r ->> 'text_sha256'
                       OR prev_raw IS DISTINCT FROM r ->> 'raw_sha256';
        ELSE
            sid := -(p_key + i);  -- numbered below
            new_count := new_count + 1;
            later := coalesce(octet_length(p_texts[i]), 0) + coalesce(octet_length(p_raws[i]), 0)
                     <= @LATE@;
        END IF;
        chunk_count := (r ->> 'chunks')::integer;
        IF changed THEN
            num := coalesce(prev_number, 0) + 1;
            IF later THEN  -- written once numbered, below; its passages need its id now
                vid := nextval('version_id_seq'::regclass);
            ELSE
                -- (a new source's large version names it by its key until it is
                -- numbered: the foreign key, deferred, is checked at the commit)
                INSERT INTO version (source_id, number, text_sha256, raw_sha256,
                                     retrieved_at, extractor, extractor_version, meta, pages,
                                     text, raw, raw_size, raw_stored)
                VALUES (sid, num, r ->> 'text_sha256', r ->> 'raw_sha256', at,
                        r ->> 'extractor', r ->> 'extractor_version', r ->> 'meta',
                        r ->> 'pages', p_texts[i], p_raws[i], (r ->> 'raw_size')::bigint,
                        (r ->> 'raw_stored')::bigint)
                RETURNING id INTO vid;
            END IF;
            IF prev_id IS NOT NULL THEN  -- only the latest version is searched
                UPDATE passage SET terms = NULL WHERE version_id = prev_id;
            END IF;
            IF chunk_count > 0 THEN
                WITH c AS (
                    INSERT INTO text_chunk (version_id, n, body)
                    SELECT vid, c.k - 1, c.body
                    FROM unnest(p_chunks[chunk_at + 1 : chunk_at + chunk_count])
                         WITH ORDINALITY AS c(body, k))
                INSERT INTO passage (version_id, start, "end", page, page_label, terms,
                                     ordinal, heading)
                SELECT vid, (x.p ->> 0)::integer, (x.p ->> 1)::integer,
                       (x.p ->> 2)::integer, x.p ->> 3,
                       array_to_tsvector(string_to_array(x.p ->> 4, ' ')), x.k, x.p ->> 5
                FROM jsonb_array_elements(r -> 'passages') WITH ORDINALITY AS x(p, k);
            ELSE
                INSERT INTO passage (version_id, start, "end", page, page_label, terms,
                                     ordinal, heading)
                SELECT vid, (x.p ->> 0)::integer, (x.p ->> 1)::integer,
                       (x.p ->> 2)::integer, x.p ->> 3,
                       array_to_tsvector(string_to_array(x.p ->> 4, ' ')), x.k, x.p ->> 5
                FROM jsonb_array_elements(r -> 'passages') WITH ORDINALITY AS x(p, k);
            END IF;
        ELSE
            num := prev_number;
            vid := prev_id;
        END IF;
        chunk_at := chunk_at + chunk_count;
        IF sid > 0 THEN  -- a known source: its rows now, and its answer
            UPDATE source SET latest_version = vid,
                last_retrieved = CASE WHEN (r ->> 'retrieved')::boolean
                                      THEN greatest(last_retrieved, at)
                                      ELSE last_retrieved END,
                title = coalesce(r ->> 'title', title), site = coalesce(r ->> 'site', site),
                author = coalesce(r ->> 'author', author),
                published = coalesce(r ->> 'published', published)
            WHERE id = sid
            RETURNING kind, display, title, first_retrieved, last_retrieved, site, author,
                      published
            INTO kind, display, title, first_retrieved, last_retrieved, site, author,
                 published;
            IF jsonb_array_length(r -> 'quotes') > 0 THEN
                INSERT INTO quote (source_id, version_id, start, "end", page, page_label,
                                   text, first_at)
                SELECT sid, vid, (x.q ->> 0)::integer, (x.q ->> 1)::integer,
                       (x.q ->> 2)::integer, x.q ->> 3, x.q ->> 4, p_now
                FROM jsonb_array_elements(r -> 'quotes') AS x(q)
                ON CONFLICT (version_id, start, "end") DO NOTHING;
            END IF;
            IF jsonb_array_length(r -> 'hits') > 0 THEN
                INSERT INTO search_hit (source_id, query, engine, rank, title, snippet, at)
                SELECT sid, x.h ->> 0, x.h ->> 1, (x.h ->> 2)::integer, x.h ->> 3,
                       x.h ->> 4, p_now
                FROM jsonb_array_elements(r -> 'hits') AS x(h)
                ON CONFLICT (source_id, query, engine, rank) DO NOTHING;
            END IF;
            SELECT count(*) INTO versions FROM version c WHERE c.source_id = sid;
            ordinal := i; version_id := vid; new_source := false; new_version := changed;
            source_id := sid; number := num;
            IF changed THEN
                retrieved_at := at; text_sha256 := r ->> 'text_sha256'; meta := r ->> 'meta';
            ELSE
                retrieved_at := prev_at; text_sha256 := prev_text; meta := prev_meta;
            END IF;
            RETURN NEXT;
        END IF;
        sids := sids || sid;
        vids := vids || vid;
        nums := nums || num;
        fresh := fresh || (sid < 0);
        late := late || later;
    END LOOP;
    IF new_count > 0 THEN
        -- the id counter, last: writers wait for each other only from here to the commit
        PERFORM pg_advisory_xact_lock(hashtext('fetchledger.counter'),
                                      'counter'::regclass::oid::integer);
        UPDATE counter SET value = value + new_count WHERE name = 'source'
        RETURNING value - new_count INTO base;
        FOR i IN 1 .. n LOOP
            CONTINUE WHEN NOT fresh[i];
            r := p_regs -> (i - 1);
            base := base + 1;
            sids[i] := base;
            at := r ->> 'at';
            IF NOT late[i] THEN  -- a large version, written under its key
                UPDATE version SET source_id = base WHERE id = vids[i];
            END IF;
            -- the rows that name its id, in one statement: source, version (small: see
            -- above), quotes, the ok attempt of a call of one registration (else below,
            -- in order), names (sorted by the writer: every writer inserts names in one
            -- order)
            WITH s AS (
                INSERT INTO source (id, kind, locator, display, title, site, author,
                                    published, first_retrieved, last_retrieved,
                                    latest_version)
                VALUES (base, r ->> 'kind', r ->> 'locator', r ->> 'display', r ->> 'title',
                        r ->> 'site', r ->> 'author', r ->> 'published', at, at, vids[i])),
            v AS (
                INSERT INTO version (id, source_id, number, text_sha256, raw_sha256,
                                     retrieved_at, extractor, extractor_version, meta, pages,
                                     text, raw, raw_size, raw_stored)
                SELECT vids[i], base, 1, r ->> 'text_sha256', r ->> 'raw_sha256', at,
                       r ->> 'extractor', r ->> 'extractor_version', r ->> 'meta',
                       r ->> 'pages', p_texts[i], p_raws[i], (r ->> 'raw_size')::bigint,
                       (r ->> 'raw_stored')::bigint
                WHERE late[i]),
            q AS (
                INSERT INTO quote (source_id, version_id, start, "end", page, page_label,
                                   text, first_at)
                SELECT base, vids[i], (x.q ->> 0)::integer, (x.q ->> 1)::integer,
                       (x.q ->> 2)::integer, x.q ->> 3, x.q ->> 4, p_now
                FROM jsonb_array_elements(r -> 'quotes') AS x(q)),
            a AS (
                INSERT INTO attempt (kind, locator, at, status, message, source_id)
                SELECT r ->> 'kind', r ->> 'display', at, 'ok',
                       'registered as [' || base || '] version 1', base
                WHERE n = 1 AND (r ->> 'retrieved')::boolean)
            INSERT INTO alias (locator, source_id)
            SELECT x.name, base FROM jsonb_array_elements_text(r -> 'names') AS x(name);
            IF jsonb_array_length(r -> 'hits') > 0 THEN
                INSERT INTO search_hit (source_id, query, engine, rank, title, snippet, at)
                SELECT base, x.h ->> 0, x.h ->> 1, (x.h ->> 2)::integer, x.h ->> 3,
                       x.h ->> 4, p_now
                FROM jsonb_array_elements(r -> 'hits') AS x(h)
                ON CONFLICT (source_id, query, engine, rank) DO NOTHING;
            END IF;
            ordinal := i; version_id := vids[i]; new_source := true; new_version := true;
            source_id := base; kind := r ->> 'kind'; display := r ->> 'display';
            title := r ->> 'title'; retrieved_at := at; text_sha256 := r ->> 'text_sha256';
            versions := 1; number := 1; first_retrieved := at; last_retrieved := at;
            site := r ->> 'site'; author := r ->> 'author'; published := r ->> 'published';
            meta := r ->> 'meta';
            RETURN NEXT;
        END LOOP;
    END IF;
    FOR i IN 1 .. n LOOP  -- every retrieval's ok attempt, in order, then the failed ones
        CONTINUE WHEN n = 1 AND fresh[i];  -- written with its source
        r := p_regs -> (i - 1);
        CONTINUE WHEN NOT (r ->> 'retrieved')::boolean;
        INSERT INTO attempt (kind, locator, at, status, message, source_id)
        VALUES (r ->> 'kind', r ->> 'display', r ->> 'at', 'ok',
                format('registered as [%s] version %s', sids[i], nums[i]), sids[i]);
    END LOOP;
    IF jsonb_array_length(p_failed) > 0 THEN
        INSERT INTO attempt (kind, locator, at, status, message)
        SELECT f.a ->> 0, f.a ->> 1, p_now, f.a ->> 2, f.a ->> 3
        FROM jsonb_array_elements(p_failed) WITH ORDINALITY AS f(a, k) ORDER BY f.k;
    END IF;
END
$fn$;
""".replace("@LATE@", str(_LATE_VERSION))

REGISTER_FUNCTION = REGISTER_FUNCTION_0021

# A transaction that writes one WAL record and has a transaction id, so that its commit
# (synchronous, as the session's setting is) waits for the WAL up to it, and so for
# every transaction committed before it, to be flushed: nothing else is written.
FLUSH = b"SELECT txid_current(), pg_logical_emit_message(true, 'fetchledger', 'flush')"

# as migration 0009_register_function created it (0013 replaces it)
REGISTER_FUNCTION_0009 = """
CREATE FUNCTION fetchledger_register(
    p_key bigint, p_now text, p_regs jsonb, p_texts text[], p_raws bytea[],
    p_chunks bytea[], p_chunk_of integer[], p_failed jsonb)
RETURNS TABLE (version_id bigint, new_source boolean, new_version boolean,
               source_id bigint, kind text, display text, title text, retrieved_at text,
               text_sha256 text, versions bigint, number integer, first_retrieved text,
               last_retrieved text, site text, author text, published text, meta text)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
    n integer := jsonb_array_length(p_regs);
    r jsonb;
    names text[];
    sid bigint;
    vid bigint;
    num integer;
    changed boolean;
    prev_id bigint;
    prev_number integer;
    prev_text text;
    prev_raw text;
    sids bigint[] := '{}';
    vids bigint[] := '{}';
    nums integer[] := '{}';
    fresh boolean[] := '{}';
    changes boolean[] := '{}';
    new_count integer := 0;
    base bigint;
BEGIN
    FOR i IN 1 .. n LOOP
        r := p_regs -> (i - 1);
        names := ARRAY(SELECT jsonb_array_elements_text(r -> 'names'));
        changed := true;
        prev_id := NULL;
        prev_number := 0;
        -- the source holding the canonical locator, else the oldest holding another name
        SELECT a.source_id INTO sid FROM alias a WHERE a.locator = ANY(names)
        ORDER BY a.locator = r ->> 'locator' DESC, a.source_id LIMIT 1;
        IF sid IS NOT NULL THEN
            INSERT INTO alias (locator, source_id) SELECT unnest(names), sid
            ON CONFLICT (locator) DO NOTHING;
            -- locked first, then read: the version a writer just committed is seen
            SELECT s.latest_version INTO prev_id FROM source s WHERE s.id = sid FOR UPDATE;
            SELECT v.number, v.text_sha256, v.raw_sha256
            INTO prev_number, prev_text, prev_raw FROM version v WHERE v.id = prev_id;
            changed := prev_id IS NULL OR prev_text IS DISTINCT FROM r ->> 'text_sha256'
                       OR prev_raw IS DISTINCT FROM r ->> 'raw_sha256';
        ELSE
            sid := -(p_key + i);  -- numbered below
            new_count := new_count + 1;
            SET CONSTRAINTS version_source_id_fkey DEFERRED;
        END IF;
        IF changed THEN
            num := coalesce(prev_number, 0) + 1;
            vid := nextval(pg_get_serial_sequence('version', 'id'));
            INSERT INTO version (id, source_id, number, text_sha256, raw_sha256,
                                 retrieved_at, extractor, extractor_version, meta, pages,
                                 text, raw, raw_size, raw_stored)
            VALUES (vid, sid, num, r ->> 'text_sha256', r ->> 'raw_sha256', r ->> 'at',
                    r ->> 'extractor', r ->> 'extractor_version', r ->> 'meta',
                    r ->> 'pages', p_texts[i], p_raws[i], (r ->> 'raw_size')::bigint,
                    (r ->> 'raw_stored')::bigint);
            IF prev_id IS NOT NULL THEN  -- only the latest version is searched
                UPDATE passage SET terms = NULL WHERE version_id = prev_id;
            END IF;
            INSERT INTO passage (version_id, start, "end", page, page_label, terms, ordinal,
                                 heading)
            SELECT vid, (x.p ->> 0)::integer, (x.p ->> 1)::integer, (x.p ->> 2)::integer,
                   x.p ->> 3, array_to_tsvector(string_to_array(x.p ->> 4, ' ')), x.n,
                   x.p ->> 5
            FROM jsonb_array_elements(r -> 'passages') WITH ORDINALITY AS x(p, n);
            INSERT INTO text_chunk (version_id, n, body)
            SELECT vid, c.n - 1, c.body
            FROM (SELECT body, row_number() OVER (ORDER BY k) AS n
                  FROM unnest(p_chunks, p_chunk_of) WITH ORDINALITY AS u(body, owner, k)
                  WHERE owner = i) AS c;
        ELSE
            num := prev_number;
            vid := prev_id;
        END IF;
        IF sid > 0 THEN
            UPDATE source SET latest_version = vid,
                last_retrieved = CASE WHEN (r ->> 'retrieved')::boolean
                                      THEN greatest(last_retrieved, r ->> 'at')
                                      ELSE last_retrieved END,
                title = coalesce(r ->> 'title', title), site = coalesce(r ->> 'site', site),
                author = coalesce(r ->> 'author', author),
                published = coalesce(r ->> 'published', published)
            WHERE id = sid;
            PERFORM fetchledger_register_quotes(sid, vid, r, p_now);
        END IF;
        sids := sids || sid;
        vids := vids || vid;
        nums := nums || num;
        fresh := fresh || (sid < 0);
        changes := changes || changed;
    END LOOP;
    IF new_count > 0 THEN
        UPDATE counter SET value = value + new_count WHERE name = 'source'
        RETURNING value - new_count INTO base;
        FOR i IN 1 .. n LOOP
            CONTINUE WHEN NOT fresh[i];
            r := p_regs -> (i - 1);
            base := base + 1;
            sids[i] := base;
            INSERT INTO source (id, kind, locator, display, title, site, author, published,
                                first_retrieved, last_retrieved, latest_version)
            VALUES (base, r ->> 'kind', r ->> 'locator', r ->> 'display', r ->> 'title',
                    r ->> 'site', r ->> 'author', r ->> 'published', r ->> 'at',
                    r ->> 'at', vids[i]);
            INSERT INTO alias (locator, source_id)
            SELECT name, base FROM jsonb_array_elements_text(r -> 'names') AS x(name)
            ORDER BY name;
            UPDATE version SET source_id = base WHERE id = vids[i];
            PERFORM fetchledger_register_quotes(base, vids[i], r, p_now);
        END LOOP;
    END IF;
    INSERT INTO attempt (kind, locator, at, status, message, source_id)
    SELECT a.r ->> 'kind', a.r ->> 'display', a.r ->> 'at', 'ok',
           format('registered as [%s] version %s', sids[a.n], nums[a.n]), sids[a.n]
    FROM jsonb_array_elements(p_regs) WITH ORDINALITY AS a(r, n)
    WHERE (a.r ->> 'retrieved')::boolean ORDER BY a.n;
    INSERT INTO attempt (kind, locator, at, status, message)
    SELECT f.a ->> 0, f.a ->> 1, p_now, f.a ->> 2, f.a ->> 3
    FROM jsonb_array_elements(p_failed) WITH ORDINALITY AS f(a, n) ORDER BY f.n;
    RETURN QUERY
    SELECT vids[x.i], fresh[x.i], changes[x.i], s.id, s.kind, s.display, s.title,
           v.retrieved_at, v.text_sha256,
           CASE WHEN fresh[x.i] THEN 1
                ELSE (SELECT count(*) FROM version c WHERE c.source_id = s.id) END,
           v.number, s.first_retrieved, s.last_retrieved, s.site, s.author, s.published,
           v.meta
    FROM generate_series(1, n) AS x(i)
    JOIN source s ON s.id = sids[x.i] JOIN version v ON v.id = vids[x.i]
    ORDER BY x.i;
END
$fn$;

-- A registration's quotes and search hits (``r``: one element of fetchledger_register's
-- p_regs), under its source and version.
CREATE FUNCTION fetchledger_register_quotes(p_source bigint, p_version bigint, r jsonb,
                                            p_now text)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
    IF jsonb_array_length(r -> 'quotes') > 0 THEN
        INSERT INTO quote (source_id, version_id, start, "end", page, page_label, text,
                           first_at)
        SELECT p_source, p_version, (x.q ->> 0)::integer, (x.q ->> 1)::integer,
               (x.q ->> 2)::integer, x.q ->> 3, x.q ->> 4, p_now
        FROM jsonb_array_elements(r -> 'quotes') AS x(q)
        ON CONFLICT (version_id, start, "end") DO NOTHING;
    END IF;
    IF jsonb_array_length(r -> 'hits') > 0 THEN
        INSERT INTO search_hit (source_id, query, engine, rank, title, snippet, at)
        SELECT p_source, x.h ->> 0, x.h ->> 1, (x.h ->> 2)::integer, x.h ->> 3, x.h ->> 4,
               p_now
        FROM jsonb_array_elements(r -> 'hits') AS x(h)
        ON CONFLICT (source_id, query, engine, rank) DO NOTHING;
    END IF;
END
$fn$;
"""
