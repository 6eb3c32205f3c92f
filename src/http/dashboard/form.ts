/**
 * Bodies of the dashboard's forms (`application/x-www-form-urlencoded`),
 * read once, before any page runs, and bounded like every other input: at
 * most `MAX_FORM_BYTES` (a 413), UTF-8, and each name and value text Postgres
 * can store (a 400 naming the field otherwise).
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError, badRequest } from "../../domain/errors";
import { MAX_QUERY_PARAMETER_BYTES } from "../input";
import { decodeComponent } from "../request";
import type { DashboardEnv } from "./env";

/** The largest form the dashboard takes: a DLQ selection of 100 ids with room to spare. */
export const MAX_FORM_BYTES = 64 * 1024;

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Reads the form of every request that is not a GET into the `form` variable. */
export function readForm(): MiddlewareHandler<DashboardEnv> {
  const limit = bodyLimit({
    maxSize: MAX_FORM_BYTES,
    onError: () => {
      throw new AppError(413, `a dashboard form is at most ${MAX_FORM_BYTES} bytes`);
    },
  });
  return async (c, next) => {
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    return limit(c, async () => {
      c.set("form", parseForm(await c.req.arrayBuffer()));
      await next();
    });
  };
}

/** The fields of a form body; repeated fields (checkbox lists) are joined with commas. */
function parseForm(bytes: ArrayBuffer): Map<string, string> {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw badRequest("the form is not UTF-8");
  }
  const fields = new Map<string, string>();
  for (const part of text.split("&")) {
    if (part === "") continue;
    const [rawName, ...rest] = part.replaceAll("+", " ").split("=");
    const name = decodeComponent(rawName!, "a form field name", 100);
    const value = decodeComponent(rest.join("="), `form field "${name}"`, MAX_QUERY_PARAMETER_BYTES);
    fields.set(name, fields.has(name) ? `${fields.get(name)},${value}` : value);
  }
  return fields;
}
