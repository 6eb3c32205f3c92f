// Compiles src/ into dist/cli.js, the JavaScript `npm start` runs: one ES module
// bundled by esbuild (the compiler tsx already uses), packages left as imports.
// Run by `npm install` (prepare) and before `npm start`; tests and the bench
// build it too, so what they start is what users run.
import { build } from "esbuild";

await build({
  entryPoints: ["src/cli.ts"],
  outfile: "dist/cli.js",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  packages: "external",
  sourcemap: true,
  logLevel: "warning",
});
