CREATE TABLE "dispatch"."claims" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "dispatch"."claims_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"worker_id" text NOT NULL,
	"message_ids" text[] NOT NULL,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "dispatch"."messages_awaiting_job_idx";--> statement-breakpoint
DROP INDEX "dispatch"."messages_queue_pending_idx";--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "due_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "claim_id" bigint;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "pending_queue" text;--> statement-breakpoint
CREATE INDEX "messages_due_idx" ON "dispatch"."messages" USING btree ("due_at") WHERE "dispatch"."messages"."due_at" is not null;--> statement-breakpoint
CREATE INDEX "messages_pending_queue_idx" ON "dispatch"."messages" USING btree ("pending_queue","queue_started","seq") WHERE "dispatch"."messages"."pending_queue" is not null;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD CONSTRAINT "messages_due_check" CHECK ("dispatch"."messages"."due_at" is null or "dispatch"."messages"."state" in ('CREATED','RETRY'));--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD CONSTRAINT "messages_pending_queue_check" CHECK ("dispatch"."messages"."pending_queue" is null or ("dispatch"."messages"."pending_queue" = "dispatch"."messages"."queue_name" and "dispatch"."messages"."state" in ('CREATED','RETRY')));--> statement-breakpoint
ALTER TABLE "dispatch"."messages" DROP COLUMN "job_scheduled";--> statement-breakpoint
-- Pending messages move from graphile-worker's jobs to the claimable work list (due_at).
UPDATE "dispatch"."messages" SET "due_at" = "next_delivery_at"
  WHERE "state" in ('CREATED','RETRY') AND ("queue_name" IS NULL OR "queue_started");--> statement-breakpoint
UPDATE "dispatch"."messages" SET "pending_queue" = "queue_name"
  WHERE "queue_name" IS NOT NULL AND "state" in ('CREATED','RETRY');--> statement-breakpoint
DO $$ BEGIN
  IF to_regclass('graphile_worker._private_jobs') IS NOT NULL THEN
    DELETE FROM graphile_worker._private_jobs j USING graphile_worker._private_tasks t
      WHERE t.id = j.task_id AND t.identifier = 'deliver';
  END IF;
END $$;--> statement-breakpoint
-- Room on each page for the delivered update to stay HOT (no index names state or completed_at).
ALTER TABLE "dispatch"."messages" SET (fillfactor = 80);
