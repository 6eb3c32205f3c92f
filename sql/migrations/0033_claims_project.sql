-- A claim's project, when its messages are all of one: on Citus (docs/citus.md) claims are distributed on it
-- beside the messages, so that a claim and its registration run on one node; null for the one-server claim.
ALTER TABLE "dispatch"."claims" ADD COLUMN "project" text;
