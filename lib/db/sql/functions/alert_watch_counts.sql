-- alert_watch_counts: keeps schedule_counts and rule_counts equal to what alert_watch holds, so the
-- Overview's counts by status and the metrics' schedules by status and rules holding read a handful
-- of rows instead of judging every schedule. The triggers alert_watch_counts_insert, _update and
-- _delete run it once per statement with that statement's transition tables (new_rows, old_rows).
-- A row counts once the alert pass has evaluated it (status not null): under its status and handler,
-- and for each rule it holds. A statement's change is the rows it added less the rows it removed,
-- summed by key, so an update that moves check_at alone changes no sum and writes nothing. Only the
-- keys whose sum is not 0 are written, each in key order, so two statements counting the same keys
-- lock their rows in the same order and cannot deadlock. A count that falls to 0 keeps its row.
CREATE OR REPLACE FUNCTION alert_watch_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  added alert_watch[] := '{}';
  removed alert_watch[] := '{}';
BEGIN
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    added := ARRAY(SELECT n FROM new_rows n WHERE n.status IS NOT NULL);
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    removed := ARRAY(SELECT o FROM old_rows o WHERE o.status IS NOT NULL);
  END IF;
  IF cardinality(added) = 0 AND cardinality(removed) = 0 THEN
    RETURN NULL;
  END IF;
  WITH d AS (
    SELECT a.status, a.handler, a.rules, 1 AS n FROM unnest(added) a
    UNION ALL
    SELECT r.status, r.handler, r.rules, -1 AS n FROM unnest(removed) r
  ),
  by_status AS (
    INSERT INTO schedule_counts AS c (status, handler, n)
    SELECT d.status, d.handler, sum(d.n) FROM d GROUP BY d.status, d.handler HAVING sum(d.n) <> 0 ORDER BY d.status, d.handler
    ON CONFLICT (status, handler) DO UPDATE SET n = c.n + excluded.n
  )
  INSERT INTO rule_counts AS c (rule, n)
  SELECT h.rule, sum(d.n) FROM d CROSS JOIN unnest(d.rules) AS h(rule) GROUP BY h.rule HAVING sum(d.n) <> 0 ORDER BY h.rule
  ON CONFLICT (rule) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;
