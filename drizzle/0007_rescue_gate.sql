-- One look for expired run leases per poll interval for the whole cluster: the rescue reads every
-- running run (a walk of run_queue_running_idx, ~5 ms in a 400,000-run spike), and with every
-- worker looking each poll interval that cost grew with the number of workers. The worker that
-- finds the stamp older than the interval moves it and looks; the others skip until it is due.
ALTER TABLE "cluster" ADD COLUMN "rescued_at" timestamp with time zone;
--> statement-breakpoint
-- sk_now() in PL/pgSQL: its one query is planned once per connection. As a SQL function (which
-- PostgreSQL cannot inline: FROM, UNION, LIMIT) its body was planned again in every statement that
-- called it, ~0.12 ms against ~0.035 ms (EXPLAIN ANALYZE of a clock CTE, repeated in one session),
-- and every hot statement calls it once. Called per row it costs no more than before (7-10 µs).
CREATE OR REPLACE FUNCTION sk_now() RETURNS timestamptz
  LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  t timestamptz;
BEGIN
  SELECT coalesce(c.frozen_at, now() + c.shift) INTO t FROM sk_clock c WHERE c.id = 1;
  RETURN coalesce(t, now());
END
$$;
