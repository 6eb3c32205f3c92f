/** Signing keys: `GET /v2/keys` and `POST /v2/keys/rotate` (docs/hosted-api.md §10.1). */
import { Hono } from "hono";
import { readSigningKeys, rotateSigningKeys } from "../../domain/delivery/signing-keys";
import type { AppDeps } from "../deps";

/** Routes of the signing keys, mounted at /v2. */
export function keyRoutes(deps: AppDeps) {
  const configured = deps.config.currentSigningKey !== null;
  const rotate = async () => deps.sql.begin((tx) => rotateSigningKeys(tx, configured));
  return (
    new Hono()
      .get("/keys", async (c) => c.json(await readSigningKeys(deps.sql)))
      .post("/keys/rotate", async (c) => c.json(await rotate()))
      // The Go SDK posts to /v2/rotate (docs/hosted-api.md §10.1).
      .post("/rotate", async (c) => c.json(await rotate()))
  );
}
