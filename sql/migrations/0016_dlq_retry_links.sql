ALTER TABLE "dispatch"."messages" ADD COLUMN "retried_as" text;--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "retried_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "messages_retried_at_idx" ON "dispatch"."messages" USING btree ("retried_at") WHERE "dispatch"."messages"."retried_as" is not null;