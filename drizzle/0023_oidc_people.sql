ALTER TABLE "people" ADD COLUMN "oidc_issuer" text;--> statement-breakpoint
ALTER TABLE "people" ADD COLUMN "oidc_subject" text;--> statement-breakpoint
ALTER TABLE "people" ALTER COLUMN "password_hash" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "people" ADD CONSTRAINT "people_oidc_pair" CHECK ((oidc_issuer IS NULL) = (oidc_subject IS NULL));--> statement-breakpoint
ALTER TABLE "people" ADD CONSTRAINT "people_password_or_oidc" CHECK (password_hash IS NOT NULL OR oidc_subject IS NOT NULL);--> statement-breakpoint
CREATE UNIQUE INDEX "people_oidc_key" ON "people" USING btree ("oidc_issuer","oidc_subject") WHERE oidc_subject IS NOT NULL;--> statement-breakpoint
CREATE TABLE "oidc_logins" (
	"state_hash" text PRIMARY KEY NOT NULL,
	"nonce" text NOT NULL,
	"code_verifier" text NOT NULL,
	"next_path" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);--> statement-breakpoint
CREATE INDEX "oidc_logins_expires_idx" ON "oidc_logins" USING btree ("expires_at");
