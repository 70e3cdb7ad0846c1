-- One rule for a schedule's partition. A new schedule was hashed into its partition while a change
-- of the partition count used id mod P, so a count changed and changed back left schedules in
-- other partitions than they were created in. Both now call this function
-- (lib/db/sql/functions/sk_partition_of.sql). Schedules keep the partition they have: any
-- partition is correct as long as a schedule and its queued runs agree, and they do.
CREATE OR REPLACE FUNCTION sk_partition_of(schedule_id bigint, partitions int) RETURNS int LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT (((hashtextextended(schedule_id::text, 0) % partitions) + partitions) % partitions)::int $$;
