// Compiles src/ into dist/cli.js, the JavaScript `npm start` runs: ES modules
// bundled by esbuild (the compiler tsx already uses), split where cli.ts
// imports lazily (an operator command loads no HTTP server and no worker:
// `dispatch help` starts in a fraction of the time), packages left as imports
// but drizzle-orm, which is bundled in: Node 24 reads its 178 KB package.json
// for each of the modules it loads (1.25 s to import drizzle-orm/pg-core
// against 0.22 s on Node 20), and every process would pay that at start.
// Run by `npm install` (prepare) and before `npm start`; tests and the bench
// build it too, so what they start is what users run. Each file is written
// beside its place and renamed over it, cli.js last: a Dispatch process starting
// while another test run builds reads the old file or the new one, never half of
// one (chunks are named by their content hash, so an old cli.js finds its own).
// A build whose files are as the last one left them (dist/.inputs.json: a
// digest of each file it read or wrote, this script and package.json among
// them) is skipped: `npm start` then costs no esbuild run.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";

const STAMP = "dist/.inputs.json";
/** The files whose content decides whether dist/ is current, beside esbuild's inputs and outputs. */
const ALWAYS = ["scripts/build.mjs", "package.json"];

/** A digest of `path`'s content (timestamps change with copies and checkouts), or null when it is gone. */
function fingerprint(path) {
  try {
    return createHash("sha1").update(readFileSync(path)).digest("base64");
  } catch {
    return null;
  }
}

/** Whether every file the last build read or wrote is as it left it. */
function current() {
  if (!existsSync(STAMP)) return false;
  try {
    const files = JSON.parse(readFileSync(STAMP, "utf8"));
    return Object.entries(files).every(([path, was]) => fingerprint(path) === was);
  } catch {
    return false;
  }
}

if (current()) process.exit(0);
const { build } = await import("esbuild");

const { dependencies } = JSON.parse(readFileSync("package.json", "utf8"));
/** The packages left as imports (a package marked external marks its subpaths too). */
const external = Object.keys(dependencies).filter((name) => name !== "drizzle-orm");

const result = await build({
  entryPoints: ["src/cli.ts"],
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  splitting: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external,
  sourcemap: true,
  logLevel: "warning",
  write: false,
  metafile: true,
});
const entry = resolve("dist/cli.js");
const files = [...result.outputFiles].sort((a, b) => Number(a.path.startsWith(entry)) - Number(b.path.startsWith(entry)));
mkdirSync("dist/chunks", { recursive: true });
for (const file of files) {
  const temporary = `${file.path}.${process.pid}.tmp`;
  writeFileSync(temporary, file.contents);
  renameSync(temporary, file.path);
}
// Chunks of earlier builds are no longer named by any entry.
const written = new Set(files.map((file) => basename(file.path)));
for (const name of readdirSync("dist/chunks")) if (!written.has(name) && !name.endsWith(".tmp")) rmSync(join("dist/chunks", name));
// Written last: a build cut short leaves no stamp, so the next one runs.
const read = [...ALWAYS, ...Object.keys(result.metafile.inputs), ...files.map((file) => relative(".", file.path))];
writeFileSync(STAMP, JSON.stringify(Object.fromEntries(read.map((path) => [path, fingerprint(path)]))));
