-- Reserved for the output sinks' claims; it changes nothing here, so the
-- migrations stay numbered without a gap.
SELECT 1;
