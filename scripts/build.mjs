// Compiles src/ into dist/cli.js, the JavaScript `npm start` runs: one ES module
// bundled by esbuild (the compiler tsx already uses), packages left as imports
// but drizzle-orm, which is bundled in: Node 24 reads its 178 KB package.json
// for each of the modules it loads (1.25 s to import drizzle-orm/pg-core
// against 0.22 s on Node 20), and every process would pay that at start.
// Run by `npm install` (prepare) and before `npm start`; tests and the bench
// build it too, so what they start is what users run. Each file is written
// beside its place and renamed over it: a Dispatch process starting while
// another test run builds reads the old file or the new one, never half of one.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { build } from "esbuild";

const { dependencies } = JSON.parse(readFileSync("package.json", "utf8"));
/** The packages left as imports (a package marked external marks its subpaths too). */
const external = Object.keys(dependencies).filter((name) => name !== "drizzle-orm");

const result = await build({
  entryPoints: ["src/cli.ts"],
  outfile: "dist/cli.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  external,
  sourcemap: true,
  logLevel: "warning",
  write: false,
});
mkdirSync("dist", { recursive: true });
for (const file of result.outputFiles) {
  const temporary = `${file.path}.${process.pid}.tmp`;
  writeFileSync(temporary, file.contents);
  renameSync(temporary, file.path);
}
