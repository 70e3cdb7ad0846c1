-- runs_alert_changes_update: every statement that moves a run's record (finish, retry, rescue of an
-- expired lease, requeue, skips, cancel) marks its schedules for the alert pass: a success resolves
-- late and moves the stuck threshold, a dead run makes the schedule failing, a retry queues a
-- pending run again. The claim and the heartbeat write run_queue alone, so they pay nothing here
-- (the pass bounds what a claim can change by time alone: lib/alerts/watch.ts). A finish pays one
-- statement-level trigger call and one small heap row for its whole batch (its schedules as an
-- array), no index entry: at the top of the hour, one row per 500 runs rather than 500.
CREATE OR REPLACE FUNCTION runs_alert_changes_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO alert_changes (schedule_ids) SELECT array_agg(DISTINCT n.schedule_id) FROM updated_runs n HAVING count(*) > 0;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_alert_changes_update AFTER UPDATE ON runs REFERENCING NEW TABLE AS updated_runs
  FOR EACH STATEMENT EXECUTE FUNCTION runs_alert_changes_update();
