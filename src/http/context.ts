/**
 * What the API's middleware keeps on a request's context, typed for every
 * handler (hono's `ContextVariableMap`): `c.get("requestId")` is a string
 * wherever it is read, with no cast. The dashboard adds its own
 * (dashboard/env.ts `DashboardEnv`).
 */
import type { Access } from "../domain/access-tokens/token-set";
import type { OperationSpec } from "./openapi/operation";

declare module "hono" {
  interface ContextVariableMap {
    /** The request's id, answered in `X-Request-Id` (server/every-request.ts). */
    requestId: string;
    /** What the request's token may do (server/middleware.ts `requireToken`). */
    access: Access;
    /** The project whose data the request sees and changes: its token's (server/middleware.ts, the dashboard's session guard). */
    project: string;
    /** The request body, read once (body.ts `readBody`). */
    body: Buffer;
    /** The operation whose route answers (openapi/operation.ts). */
    operation: OperationSpec;
    /** A dashboard session's viewer, as far as the API's helpers read it (dashboard/env.ts `Viewer`). */
    viewer: { role: string };
  }
}
