/**
 * The redactor a request reads messages through: a read-only token, or a
 * read-only dashboard session, also sees forwarded credentials masked
 * (`Redactor.forReadOnly`); a full token sees them as they were published.
 */
import type { Context } from "hono";
import type { Redactor } from "../domain/messages/redaction";

/** The redactor for the reader of `c`. */
export function redactorFor(c: Context, redactor: Redactor): Redactor {
  const access = c.get("access");
  const viewer = c.get("viewer");
  return access === "readonly" || viewer?.role === "readonly" ? redactor.forReadOnly() : redactor;
}
