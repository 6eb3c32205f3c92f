/** `GET /dashboard/keys` and `POST /dashboard/keys/rotate` (domain/delivery/signing-keys.ts), as `/v2/keys`. */
import { Hono } from "hono";
import { readSigningKeys, rotateSigningKeys } from "../../../../domain/delivery/signing-keys";
import { DEFAULT_PROJECT } from "../../../../db/vocabulary";
import type { AppDeps } from "../../../deps";
import { canAct, type DashboardEnv } from "../../env";
import { doneRedirect, NOTICE_PARAMS } from "../../kit/notices";
import { pageParams } from "../../kit/params";
import { KEYS_PATH, KeysPage } from "./keys-page";

export function keyRoutes(deps: AppDeps) {
  // Configured keys are the default project's; every other project's are stored, and rotate here.
  const configured = (project: string) => project === DEFAULT_PROJECT && deps.signingKeys.configured !== null;
  return new Hono<DashboardEnv>()
    .get("/keys", async (c) => {
      pageParams(c, NOTICE_PARAMS);
      const viewer = c.get("viewer");
      const keys = canAct(viewer) ? await readSigningKeys(deps.sql, deps.signingKeys, c.get("project")) : null;
      return c.render(<KeysPage keys={keys} configured={configured(c.get("project"))} dialect={deps.config.defaultDialect} viewer={viewer} />, { title: "Signing keys", section: "keys" });
    })
    .post("/keys/rotate", async (c) => {
      await deps.sql.begin((tx) => rotateSigningKeys(tx, deps.signingKeys, c.get("project")));
      return doneRedirect(c, KEYS_PATH, "keys-rotated");
    });
}
