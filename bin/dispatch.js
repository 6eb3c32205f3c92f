#!/usr/bin/env node
// Runs the compiled service (dist/, made by `npm run build`, which `npm install`
// and `npm start` run). DISPATCH_FROM_SOURCE=1 runs src/ through tsx's loader
// instead: a development convenience.
import { existsSync } from "node:fs";

if (process.env.DISPATCH_FROM_SOURCE === "1") {
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli.ts");
} else if (existsSync(new URL("../dist/cli.js", import.meta.url))) {
  // Stack traces point into src/ (dist/cli.js.map).
  process.setSourceMapsEnabled(true);
  await import("../dist/cli.js");
} else {
  console.error("dispatch: dist/cli.js is missing; run `npm run build` (npm install does) first");
  process.exit(1);
}
