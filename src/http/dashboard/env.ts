/** What every signed-in dashboard request carries (set by `requireSession`, guard.ts). */
import type { Role } from "./session/access";

/** The signed-in user's role and the CSRF token its forms carry. */
export interface Viewer {
  role: Role;
  csrf: string;
  /** Whether the viewer's token is the default project's (the operator's) or the admin token: it sees what every project shares. */
  operator: boolean;
  /** The project the viewer looks at. */
  project: string;
  /** Whether the session signed in with DISPATCH_ADMIN_TOKEN: it chooses the project it looks at. */
  admin: boolean;
  /** Every project's name, for an admin session's chooser (none for a project's token). */
  projects: string[];
}

/** The Hono environment of the dashboard's routes. */
export interface DashboardEnv {
  Variables: {
    viewer: Viewer;
    /** The POSTed form, parsed once (form.ts). */
    form: Map<string, string>;
  };
}

/** Whether the viewer may act (a full token), not only look. */
export const canAct = (viewer: Viewer) => viewer.role === "full";
