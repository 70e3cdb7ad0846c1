-- runs_chart_hours_truncate: emptying runs empties the counts and waits of them, and the list of hours to count.
CREATE OR REPLACE FUNCTION runs_chart_hours_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE chart_hours, chart_waits, chart_changes;
  RETURN NULL;
END $$;

CREATE OR REPLACE TRIGGER runs_chart_hours_truncate AFTER TRUNCATE ON runs FOR EACH STATEMENT EXECUTE FUNCTION runs_chart_hours_truncate();
