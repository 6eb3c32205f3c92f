-- Queue names are each project's: the key is (project, name), and the index that starts queued messages leads with the project.
DROP INDEX "dispatch"."messages_pending_queue_idx";--> statement-breakpoint
ALTER TABLE "dispatch"."queues" DROP CONSTRAINT "queues_pkey";--> statement-breakpoint
ALTER TABLE "dispatch"."queues" ADD CONSTRAINT "queues_project_name_pk" PRIMARY KEY("project","name");--> statement-breakpoint
CREATE INDEX "messages_pending_queue_idx" ON "dispatch"."messages" USING btree ("project","pending_queue","queue_started","seq") WHERE "dispatch"."messages"."pending_queue" is not null;
