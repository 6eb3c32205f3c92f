DROP INDEX "dispatch"."message_events_at_idx";--> statement-breakpoint
DROP INDEX "dispatch"."messages_source_message_id_idx";--> statement-breakpoint
CREATE INDEX "messages_source_message_id_idx" ON "dispatch"."messages" USING btree ("source_message_id") WHERE "dispatch"."messages"."source_message_id" is not null;