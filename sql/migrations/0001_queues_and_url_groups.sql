CREATE TABLE "dispatch"."queues" (
	"name" text PRIMARY KEY NOT NULL,
	"parallelism" integer DEFAULT 1 NOT NULL,
	"paused" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "queues_parallelism_check" CHECK ("dispatch"."queues"."parallelism" >= 1)
);
--> statement-breakpoint
CREATE TABLE "dispatch"."url_group_endpoints" (
	"group_name" text NOT NULL,
	"url" text NOT NULL,
	"name" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "url_group_endpoints_group_name_url_pk" PRIMARY KEY("group_name","url")
);
--> statement-breakpoint
CREATE TABLE "dispatch"."url_groups" (
	"name" text PRIMARY KEY NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "seq" bigint NOT NULL GENERATED ALWAYS AS IDENTITY (sequence name "dispatch"."messages_seq_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1);--> statement-breakpoint
ALTER TABLE "dispatch"."messages" ADD COLUMN "queue_started" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "dispatch"."url_group_endpoints" ADD CONSTRAINT "url_group_endpoints_group_name_url_groups_name_fk" FOREIGN KEY ("group_name") REFERENCES "dispatch"."url_groups"("name") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "messages_seq_idx" ON "dispatch"."messages" USING btree ("seq");--> statement-breakpoint
CREATE INDEX "messages_queue_pending_idx" ON "dispatch"."messages" USING btree ("queue_name","seq") WHERE "dispatch"."messages"."queue_name" is not null and "dispatch"."messages"."state" in ('CREATED','RETRY');