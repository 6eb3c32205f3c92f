/**
 * The page shell: navigation, who is signed in, sign-out, an action's notice,
 * a footer linking the API reference, and the assets. Applied once, by
 * `pageLayout` (hono's `jsxRenderer`): a page handler renders its page
 * component with `c.render(<Page />, head)`.
 */
import type { Context } from "hono";
import { raw } from "hono/html";
import type { Child, FC } from "hono/jsx";
import { jsxRenderer } from "hono/jsx-renderer";
import type { AssetPaths } from "./assets";
import type { DashboardEnv, Viewer } from "../env";
import { noticeOf } from "../kit/notices";
import { DEFAULT_PROJECT } from "../../../db/vocabulary";

/** The sections of the dashboard, in navigation order. */
export const SECTIONS = [
  ["overview", "Overview", "/dashboard"],
  ["messages", "Messages", "/dashboard/messages"],
  ["publish", "Publish", "/dashboard/publish"],
  ["dlq", "DLQ", "/dashboard/dlq"],
  ["destinations", "Destinations", "/dashboard/destinations"],
  ["queues", "Queues", "/dashboard/queues"],
  ["url-groups", "URL groups", "/dashboard/url-groups"],
  ["schedules", "Schedules", "/dashboard/schedules"],
  ["flow-control", "Flow control", "/dashboard/flow-control"],
  ["workflows", "Workflow runs", "/dashboard/workflows"],
  ["keys", "Signing keys", "/dashboard/keys"],
] as const;

export type Section = (typeof SECTIONS)[number][0];

/** Sections of what every project shares: the default project's viewers (the operator's) see them. */
export const OPERATOR_SECTIONS: Section[] = ["destinations"];

/** What every page is framed with. */
export interface Frame {
  assets: AssetPaths;
  /** Null on the sign-in page. */
  viewer: Viewer | null;
}

/** A link back to where a page belongs (a schedule's page to the schedules). */
export interface BackLink {
  href: string;
  label: string;
}

/** What a page tells the layout: its title, the section of the navigation it is in, and the way back. */
export interface PageHead {
  title: string;
  section?: Section;
  back?: BackLink;
}

declare module "hono" {
  interface ContextRenderer {
    (content: string | Promise<string>, head: PageHead): Response | Promise<Response>;
  }
}

/**
 * Renders every page (`c.render`) in the layout: framed for whoever is signed
 * in (nobody, on the sign-in page), with the notice of the action that led
 * here (notices.ts).
 */
export const pageLayout = (assets: AssetPaths) =>
  jsxRenderer(
    ({ children, title, section, back }, c: Context<DashboardEnv>) => (
      <Layout frame={{ assets, viewer: c.get("viewer") ?? null }} title={title} section={section} back={back} notice={noticeOf(c)}>
        {children}
      </Layout>
    ),
    // The layout writes its own doctype: error pages use it directly (errors.tsx).
    { docType: false },
  );

/** The document: what every page, and every error page, is framed with. */
export const Layout: FC<{
  frame: Frame;
  title: string;
  section?: Section;
  back?: BackLink;
  notice?: string | null;
  children?: Child;
}> = ({ frame, title, section, back, notice, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title} · Dispatch</title>
        <link rel="icon" type="image/svg+xml" href={frame.assets.favicon} />
        <link rel="stylesheet" href={frame.assets.style} />
        <script src={frame.assets.htmx} defer></script>
        <script src={frame.assets.script} defer></script>
      </head>
      <body>
        <header class="top">
          <a class="brand" href="/dashboard">Dispatch</a>
          {frame.viewer && <Navigation viewer={frame.viewer} section={section} />}
        </header>
        <main>
          {back && (
            <p class="back">
              <a href={back.href}>← {back.label}</a>
            </p>
          )}
          {notice && (
            <p class="notice" role="status">
              {notice}
            </p>
          )}
          {children}
        </main>
        <Footer />
      </body>
    </html>
  </>
);

/** The sections, the one the page is in marked; who is signed in, and sign-out. */
const Navigation = ({ viewer, section }: { viewer: Viewer; section: Section | undefined }) => (
  <>
    <nav>
      {SECTIONS.filter(([key]) => viewer.operator || !OPERATOR_SECTIONS.includes(key)).map(([key, label, href]) => (
        <a href={href} class={key === section ? "here" : ""}>
          {label}
        </a>
      ))}
    </nav>
    <div class="who">
      <Project viewer={viewer} />
      <span>{viewer.admin ? "admin" : viewer.role === "full" ? "full access" : "read-only"}</span>
      <form class="inline" method="post" action="/dashboard/logout">
        <input type="hidden" name="_csrf" value={viewer.csrf} />
        <button type="submit">Sign out</button>
      </form>
    </div>
  </>
);

/**
 * The project on view: an admin session's chooser (every project, the one on
 * view selected), else the project's name when it is not the default (a
 * single-team Dispatch never mentions projects).
 */
const Project = ({ viewer }: { viewer: Viewer }) => {
  if (!viewer.admin) return viewer.project === DEFAULT_PROJECT ? null : <span data-project={viewer.project}>project {viewer.project}</span>;
  return (
    <form class="inline project-choice" method="post" action="/dashboard/project">
      <input type="hidden" name="_csrf" value={viewer.csrf} />
      <label for="project-choice">Project</label>
      <select id="project-choice" name="project">
        {viewer.projects.map((name) => (
          <option value={name} selected={name === viewer.project}>
            {name}
          </option>
        ))}
      </select>
      <button type="submit">Show</button>
    </form>
  );
};

/** On every page, the sign-in page too: where the API is described (http/routes/api-document.ts), for people and for tools. */
const Footer = () => (
  <footer class="bottom">
    <span>Dispatch</span>
    <a href="/docs" data-link="api-reference">
      API reference
    </a>
    <a href="/openapi.json">OpenAPI document</a>
  </footer>
);
