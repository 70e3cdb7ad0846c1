-- sk_now(): the one clock. Every due / expired / late comparison in the product (the tick, the
-- claim, the rescue, heartbeats, finishes, the lateness pass, health) reads the time here, never a
-- worker's clock, so workers on machines whose clocks disagree still agree on what is due.
--
-- It returns now() unless the single sk_clock row (lib/db/schema.ts `clock`) says otherwise:
-- frozen_at stands the clock at an instant, shift moves it by an interval. Production leaves the
-- row at (shift 0, frozen_at null); tests move time here (lib/testing/clock.ts) instead of sleeping.
--
-- PL/pgSQL rather than SQL: a SQL function with FROM cannot be inlined and its body would be
-- planned again inside every statement that calls it; a PL/pgSQL body is planned once per
-- connection. Hot statements still call it once per statement (a clock CTE or an InitPlan), never
-- once per row.
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
