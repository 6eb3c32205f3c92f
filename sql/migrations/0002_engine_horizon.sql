ALTER TABLE "dispatch"."messages" ADD COLUMN "job_scheduled" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "messages_awaiting_job_idx" ON "dispatch"."messages" USING btree ("next_delivery_at") WHERE "dispatch"."messages"."state" in ('CREATED','RETRY') and not "dispatch"."messages"."job_scheduled" and ("dispatch"."messages"."queue_name" is null or "dispatch"."messages"."queue_started");--> statement-breakpoint
-- Messages stored before this migration already have their engine jobs.
UPDATE "dispatch"."messages" SET "job_scheduled" = true
WHERE "state" in ('CREATED','RETRY') and ("queue_name" is null or "queue_started");
