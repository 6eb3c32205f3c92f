/**
 * The redactor a request reads messages through: a read-only token, or a
 * read-only dashboard session, also sees forwarded credentials masked
 * (`Redactor.forReadOnly`); a full token sees them as they were published.
 */
import type { Context } from "hono";
import type { Redactor } from "../domain/messages/redaction";

/** The context key under which `requireToken` keeps the token's access (`full` or `readonly`). */
export const ACCESS = "access";

/** The redactor for the reader of `c`. */
export function redactorFor(c: Context, redactor: Redactor): Redactor {
  const access = c.get(ACCESS as never) as string | undefined;
  const viewer = c.get("viewer" as never) as { role: string } | undefined;
  return access === "readonly" || viewer?.role === "readonly" ? redactor.forReadOnly() : redactor;
}
