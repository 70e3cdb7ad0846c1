-- sk_clock: its one row (id = 1), which sk_now() reads. Production keeps it at (shift 0, frozen_at
-- null), so sk_now() is now(); tests move it (lib/testing/clock.ts).
INSERT INTO sk_clock (id, shift, frozen_at) VALUES (1, interval '0', NULL) ON CONFLICT DO NOTHING;
