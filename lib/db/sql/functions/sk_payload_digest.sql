-- sk_payload_digest(payload): the SHA-256 of a payload's text, the payload's part of the unique key
-- of run_settings (run_settings_key in lib/db/schema.ts). A jsonb prints one way for one value, so
-- equal payloads have equal digests; the digest, not the payload, goes into the index because a
-- large payload would not fit in an index entry.
--
-- Through convert_to, not a cast to bytea: text::bytea reads the text as bytea escape syntax, and a
-- payload holding a backslash (any JSON string with a quote in it) failed. convert_to is only
-- STABLE (it depends on the database's encoding, which a database never changes), so this wrapper
-- says IMMUTABLE for the index to accept it.
CREATE OR REPLACE FUNCTION sk_payload_digest(payload jsonb) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT sha256(convert_to(payload::text, 'UTF8')) $$;
