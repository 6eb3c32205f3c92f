/**
 * Bodies of the dashboard's forms (`application/x-www-form-urlencoded`),
 * read once, before any page runs, and bounded like every other input: at
 * most `MAX_FORM_BYTES` (a 413), UTF-8, and each name and value text Postgres
 * can store (a 400 naming the field otherwise).
 *
 * And what a form action answers when the domain refuses its input
 * (`formAction`): the same page again, with the navigation, what was typed
 * and the domain's error beside the form (inputs.tsx), never a bare error page.
 */
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError, badRequest } from "../../../domain/errors";
import { decodeComponent } from "../../request";
import type { DashboardEnv } from "../env";

/**
 * The largest form the dashboard takes: a DLQ selection of 100 ids with room
 * to spare, or a message body typed on the publish page (larger bodies go
 * through the API). It bounds each field too.
 */
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
    const value = decodeComponent(rest.join("="), `form field "${name}"`, MAX_FORM_BYTES);
    fields.set(name, fields.has(name) ? `${fields.get(name)},${value}` : value);
  }
  return fields;
}

/** A form the domain refused: which form of the page, what it held, and why. */
export interface Refusal {
  /** The form's name on its page (`ActionForm`'s `name`). */
  form: string;
  /** The fields as submitted, the CSRF token left out. */
  values: Map<string, string>;
  error: string;
}

/** Renders a page again with a refused form shown on it. */
export type ShowRefused = (c: Context<DashboardEnv>, refusal: Refusal) => Response | Promise<Response>;

/**
 * A POST handler for the form `name`: runs `act` on the submitted fields
 * (usually ending in a redirect with a notice); when the domain refuses the
 * input (an `AppError` with a 4xx, as the API would answer it), answers
 * `show` — the form's page with the error beside the form and the fields as
 * typed — with 400 for malformed input, else 422. Refusals of the session
 * (401, 403) and every other error go to the error page as before.
 */
export function formAction(
  name: string,
  show: ShowRefused,
  act: (c: Context<DashboardEnv>, form: Map<string, string>) => Promise<Response>,
) {
  return async (c: Context<DashboardEnv>): Promise<Response> => {
    const form = c.get("form");
    try {
      return await act(c, form);
    } catch (error) {
      if (!(error instanceof AppError) || error.status === 401 || error.status === 403) throw error;
      const values = new Map([...form].filter(([field]) => field !== "_csrf"));
      c.status(error.status === 400 ? 400 : 422);
      return show(c, { form: name, values, error: error.message });
    }
  };
}

/** A form field that must not be blank, trimmed; a 400 naming it (by `label`) otherwise. */
export function requiredField(form: Map<string, string>, name: string, label = name): string {
  const value = form.get(name)?.trim() ?? "";
  if (value === "") throw badRequest(`${label} is required`);
  return value;
}

/** A form field, trimmed; null when blank or absent. */
export function optionalField(form: Map<string, string>, name: string): string | null {
  const value = form.get(name)?.trim() ?? "";
  return value === "" ? null : value;
}
