/**
 * The container files, checked without a Docker engine: the image is built in
 * stages and runs as a non-root user; its command, its health check and every
 * compose service's command name things that exist (the CLI, its commands and
 * roles, the readiness route); what the image copies is there after a build.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { appRoutes } from "./support/routes";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const dockerfile = readFileSync(`${ROOT}Dockerfile`, "utf8");
const compose = readFileSync(`${ROOT}compose.yaml`, "utf8");
const routes = appRoutes().map((route) => `${route.method} ${route.path}`);

/** The invocations the CLI accepts (src/cli.ts). */
const VALID = [
  /^start --role (api|worker|all)$/,
  /^migrate$/,
  /^token( list| create( --name [\w.-]+)?( --readonly)?| revoke [\w.-]+)?$/,
  /^keys( rotate)?$/,
];
const validCommand = (args: string[]) => args[0] === "node" && args[1] === "bin/dispatch.js" && VALID.some((v) => v.test(args.slice(2).join(" ")));
/** The exec-form JSON array of the instruction starting with `instruction` (continuation lines joined). */
const execForm = (instruction: "CMD" | "HEALTHCHECK") => {
  const line = dockerfile.replace(/\\\n\s*/g, " ").split("\n").find((l) => l.startsWith(`${instruction} `));
  return JSON.parse(line!.slice(line!.indexOf("["))) as string[];
};

describe("Dockerfile", () => {
  it("builds in stages and runs the compiled CLI as a non-root user, in exec form", () => {
    expect(dockerfile.match(/^FROM /gm)!.length).toBeGreaterThanOrEqual(2);
    const lastStage = dockerfile.slice(dockerfile.lastIndexOf("\nFROM "));
    expect(lastStage).toMatch(/^USER (?!root\b|0\b)\w+/m);
    expect(validCommand(execForm("CMD"))).toBe(true);
    expect(existsSync(`${ROOT}bin/dispatch.js`)).toBe(true);
  });

  it("builds and runs on Node 24 LTS (Node 20 reached its end of life on 2026-04-30)", () => {
    const images = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!);
    for (const image of images) expect(image).toMatch(/^node:24-/);
  });

  it("checks health on a route the service has", () => {
    const check = execForm("HEALTHCHECK");
    expect(check[0]).toBe("node");
    const path = check.join(" ").match(/\/health\/\w+/)![0];
    expect(routes).toContain(`GET ${path}`);
  });

  it("copies into the image what a build leaves (dist from the build; the rest from the checkout)", () => {
    const copied = [...lastStageOf(dockerfile).matchAll(/^COPY --from=build \/app\/(\S+)/gm)].map((m) => m[1]!);
    expect(copied).toEqual(expect.arrayContaining(["dist", "bin", "sql", "node_modules", "package.json"]));
    for (const path of copied) expect(existsSync(`${ROOT}${path}`), path).toBe(true);
    expect(readFileSync(`${ROOT}.dockerignore`, "utf8").split("\n")).toEqual(expect.arrayContaining(["node_modules", "dist"]));
  });
});

describe("compose.yaml", () => {
  it("runs Postgres, a migration, an API and workers, each with a command the CLI accepts", () => {
    const commands = [...compose.matchAll(/^\s+command: (\[.*\])$/gm)].map((m) => JSON.parse(m[1]!) as string[]);
    expect(commands.map((c) => c.slice(2).join(" "))).toEqual(["migrate", "start --role api", "start --role worker"]);
    for (const command of commands) expect(validCommand(command), command.join(" ")).toBe(true);
    for (const service of ["postgres", "migrate", "api", "worker"]) expect(compose).toMatch(new RegExp(`^  ${service}:$`, "m"));
    expect(compose).toMatch(/condition: service_completed_successfully/);
    // The bundled Postgres by default; a database elsewhere by DATABASE_URL from the environment.
    expect(compose).toMatch(/DATABASE_URL: \$\{DATABASE_URL:-postgres:\/\/\S+@postgres:5432\/\S+\}/);
    // Every replica shares the key-encryption secret, and compose refuses to start without it.
    expect(compose).toMatch(/DISPATCH_SECRET: \$\{DISPATCH_SECRET:\?/);
  });
});

function lastStageOf(text: string): string {
  return text.slice(text.lastIndexOf("\nFROM "));
}

describe("package.json", () => {
  const manifest = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
    allowScripts: Record<string, boolean>;
  };
  const lock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, "utf8")) as {
    packages: Record<string, { version?: string; resolved?: string; hasInstallScript?: boolean; link?: boolean }>;
  };
  const installed = Object.entries(lock.packages).filter(([path]) => path !== "");

  it("keeps build tools out of the dependencies the image holds (it prunes dev dependencies)", () => {
    for (const tool of ["esbuild", "tsx", "patch-package", "typescript", "drizzle-kit", "vitest"]) {
      expect(manifest.dependencies, tool).not.toHaveProperty(tool);
      expect(manifest.devDependencies, tool).toHaveProperty(tool);
    }
    expect(dockerfile).toMatch(/npm prune --omit=dev/);
  });

  it("lets install scripts run only for the versions reviewed, and denies @scarf/scarf (install telemetry)", () => {
    expect(manifest.allowScripts["@scarf/scarf"]).toBe(false);
    const allowed = Object.entries(manifest.allowScripts).filter(([, allow]) => allow);
    // Pinned: name@version (or an exact disjunction), never a bare name that lets any future version run.
    for (const [key] of allowed) expect(key, key).toMatch(/^(@[\w.-]+\/)?[\w.-]+@\d[\w.-]*( \|\| \d[\w.-]*)*$/);
    const pinned = (name: string, version: string) =>
      allowed.some(([key]) => {
        const at = key.indexOf("@", 1);
        return key.slice(0, at) === name && key.slice(at + 1).split(" || ").includes(version);
      });
    for (const [path, entry] of installed.filter(([, entry]) => entry.hasInstallScript)) {
      const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
      if (name === "@scarf/scarf") continue;
      expect(pinned(name, entry.version!), `${name}@${entry.version}`).toBe(true);
    }
  });

  it("records where each package came from, which npm needs to match a pinned approval", () => {
    for (const [path, entry] of installed.filter(([, entry]) => !entry.link)) expect(entry.resolved, path).toMatch(/^https:\/\/registry\.npmjs\.org\//);
    expect(readFileSync(`${ROOT}.npmrc`, "utf8")).toMatch(/^omit-lockfile-registry-resolved=false$/m);
  });
});
