-- sk_partition_of(schedule_id, partitions): the partition a schedule belongs to when the cluster has
-- this many. The one statement of the rule, called where a schedule gets its partition
-- (createSchedule, lib/schedules/mutations.ts) and where every schedule gets a new one
-- (setPartitionCount, lib/partitions/count.ts), so a schedule re-partitioned back to the count it
-- was created under is back in the partition it started in.
--
-- A hash of the id rather than the id itself: ids are consecutive, and a pattern in them (every
-- other schedule deleted, say) would leave whole partitions empty under id mod P, and the workers
-- holding them idle. The hash spreads any set of ids evenly. Never negative (the modulo of a
-- negative hash is brought back into 0..P-1).
CREATE OR REPLACE FUNCTION sk_partition_of(schedule_id bigint, partitions int) RETURNS int LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT (((hashtextextended(schedule_id::text, 0) % partitions) + partitions) % partitions)::int $$;
