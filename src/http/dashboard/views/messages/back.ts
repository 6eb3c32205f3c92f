/**
 * The way back from a message's page to the list it was opened from: the
 * `back` query parameter (the lists put their own address there), else the
 * Referer; either only when it is a dashboard path of this server and not
 * the page itself, so a link cannot send the user elsewhere.
 */
import type { Context } from "hono";
import { singleParam, type Params } from "../../../query";
import { safeNext } from "../../session/guard";
import { type BackLink, SECTIONS } from "../../shell/layout";

/** The list to go back to, or null. */
export function backPath(c: Context, params: Params): string | null {
  const here = new URL(c.req.url);
  const given = singleParam(params, "back") ?? refererPath(c.req.header("referer"), here.host);
  if (given === null || safeNext(given) !== given) return null;
  return new URL(given, here).pathname === here.pathname ? null : given;
}

function refererPath(referer: string | undefined, host: string): string | null {
  if (referer === undefined || !URL.canParse(referer)) return null;
  const url = new URL(referer);
  return url.host === host ? url.pathname + url.search : null;
}

/** The layout's back link: to `back`, named after its section ("Messages, filtered"); to all messages without one. */
export function backLink(back: string | null): BackLink {
  if (back === null) return { href: "/dashboard/messages", label: "Messages" };
  const path = new URL(back, "http://dashboard").pathname;
  const section = [...SECTIONS].reverse().find(([, , href]) => path === href || path.startsWith(`${href}/`));
  const label = section?.[1] ?? "Back";
  return { href: back, label: back.includes("?") ? `${label}, filtered` : label };
}
