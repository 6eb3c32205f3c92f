CREATE TABLE "dispatch"."access_token_uses" (
	"digest" "bytea" PRIMARY KEY NOT NULL,
	"last_used_at" timestamp with time zone NOT NULL,
	CONSTRAINT "access_token_uses_digest_check" CHECK (octet_length("dispatch"."access_token_uses"."digest") = 32)
);
