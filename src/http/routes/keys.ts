/** Signing keys: `GET /v2/keys` and `POST /v2/keys/rotate` (docs/hosted-api.md §10.1). */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { readSigningKeys, rotateSigningKeys } from "../../domain/delivery/signing-keys";
import type { AppDeps } from "../deps";
import { operation } from "../openapi/operation";

const KEYS = {
  description: "The current signing key and the next one.",
  json: v.object({ current: v.string(), next: v.string() }),
};
const GET = operation({
  summary: "Get the signing keys",
  description: "Deliveries are signed with the current key (`Upstash-Signature` or `Svc-Signature`); receivers accept either key so a rotation loses nothing.",
  tag: "Signing keys",
  access: "full-token",
  responses: { 200: KEYS },
});
const rotation = (summary: string) =>
  operation({
    summary,
    description: "The next key becomes the current one and a new next key is made. Keys from configuration are rotated in the configuration instead (409).",
    tag: "Signing keys",
    access: "full-token",
    responses: { 200: KEYS },
    errors: [409],
  });
const ROTATE = rotation("Rotate the signing keys");
const ROTATE_ALIAS = rotation("Rotate the signing keys (the Go SDK's path)");

/** Routes of the signing keys, mounted at /v2. */
export function keyRoutes(deps: AppDeps) {
  const rotate = async (c: Context) => deps.sql.begin((tx) => rotateSigningKeys(tx, deps.signingKeys, c.get("project")));
  return (
    new Hono()
      .get("/keys", GET.describe, async (c) => c.json(await readSigningKeys(deps.sql, deps.signingKeys, c.get("project"))))
      .post("/keys/rotate", ROTATE.describe, async (c) => c.json(await rotate(c)))
      // The Go SDK posts to /v2/rotate (docs/hosted-api.md §10.1).
      .post("/rotate", ROTATE_ALIAS.describe, async (c) => c.json(await rotate(c)))
  );
}
