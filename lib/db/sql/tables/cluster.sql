-- cluster: its one row (id = 1): the settings every process must agree on, starting at 16
-- partitions. Web and workers read the partition count here, never from their own environment.
INSERT INTO cluster (id, partitions) VALUES (1, 16) ON CONFLICT DO NOTHING;
