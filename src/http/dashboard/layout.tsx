/** The page shell: navigation, who is signed in, sign-out, and the assets. */
import type { Child, FC } from "hono/jsx";
import { raw } from "hono/html";
import type { AssetPaths } from "./assets";
import type { Viewer } from "./env";

/** The sections of the dashboard, in navigation order. */
export const SECTIONS = [
  ["overview", "Overview", "/dashboard"],
  ["messages", "Messages", "/dashboard/messages"],
  ["dlq", "DLQ", "/dashboard/dlq"],
  ["queues", "Queues", "/dashboard/queues"],
  ["url-groups", "URL groups", "/dashboard/url-groups"],
  ["schedules", "Schedules", "/dashboard/schedules"],
  ["flow-control", "Flow control", "/dashboard/flow-control"],
  ["workflows", "Workflow runs", "/dashboard/workflows"],
] as const;

export type Section = (typeof SECTIONS)[number][0];

/** What every page is framed with. */
export interface Frame {
  assets: AssetPaths;
  /** Null on the sign-in page. */
  viewer: Viewer | null;
}

export const Layout: FC<{ frame: Frame; title: string; section?: Section; notice?: string | null; children?: Child }> = ({
  frame,
  title,
  section,
  notice,
  children,
}) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title} · Dispatch</title>
        <link rel="stylesheet" href={frame.assets.style} />
        <script src={frame.assets.htmx} defer></script>
        <script src={frame.assets.script} defer></script>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/dashboard">Dispatch</a>
          {frame.viewer && (
            <>
              <nav>
                {SECTIONS.map(([key, label, href]) => (
                  <a href={href} class={key === section ? "here" : ""}>
                    {label}
                  </a>
                ))}
              </nav>
              <div class="who">
                <span>{frame.viewer.role === "full" ? "full access" : "read-only"}</span>
                <form class="inline" method="post" action="/dashboard/logout">
                  <input type="hidden" name="_csrf" value={frame.viewer.csrf} />
                  <button type="submit">Sign out</button>
                </form>
              </div>
            </>
          )}
        </header>
        <main>
          {notice && (
            <p class="notice" role="status">
              {notice}
            </p>
          )}
          {children}
        </main>
      </body>
    </html>
  </>
);
