CREATE TABLE "dispatch"."access_tokens" (
	"name" text PRIMARY KEY NOT NULL,
	"digest" "bytea" NOT NULL,
	"read_only" boolean NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "access_tokens_digest_check" CHECK (octet_length("dispatch"."access_tokens"."digest") = 32)
);
