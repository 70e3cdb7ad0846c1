-- sk_claim_rule(overlap, max_concurrent, handler_limited): which claim statement takes a queued run,
-- as run_queue.overlap (a claim_rule). 'allow' runs go to the plain claim of the top of the hour,
-- which looks at nothing but the row; every other value goes to the limited claim
-- (lib/runs/claim/exclusive.ts), which counts the schedule's and the handler's running runs first.
-- A schedule's own overlap policy wins (forbid and skip are a limit of one); an overlap-allowing
-- schedule is 'limited' when it has a maxConcurrent or its handler has a fleet-wide limit
-- (handler_limits). The one statement of the rule: the queue triggers (runs_queue_insert,
-- schedules_queue_copies), a change of a handler's limit (lib/handlers/limits.ts) and the queue's
-- consistency check call it.
CREATE OR REPLACE FUNCTION sk_claim_rule(overlap overlap_policy, max_concurrent int, handler_limited boolean) RETURNS claim_rule LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN overlap <> 'allow' THEN overlap::text::claim_rule
    WHEN max_concurrent IS NOT NULL OR coalesce(handler_limited, false) THEN 'limited'::claim_rule
    ELSE 'allow'::claim_rule END $$;
