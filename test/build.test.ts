/**
 * scripts/build.mjs, which `npm start` runs first: it compiles src/ into dist/
 * when something it read or wrote changed, and is skipped otherwise (no
 * esbuild run at a start of an unchanged checkout).
 */
import { appendFileSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useProjectCopy } from "./support/project-copy";

const copy = useProjectCopy();
const build = () => copy.run(process.execPath, ["scripts/build.mjs"]);
const cli = () => join(copy.dir(), "dist", "cli.js");

describe("the build before a start", () => {
  it("is skipped while src/ and dist/ are as the last build left them", async () => {
    const before = statSync(cli()).mtimeMs;
    expect(await build()).toMatchObject({ code: 0, stderr: "" });
    expect(statSync(cli()).mtimeMs).toBe(before);
  });

  it("runs when a source file changed, and what it writes has the change", async () => {
    appendFileSync(join(copy.dir(), "src", "cli.ts"), '\nexport const BUILD_PROBE = "changed-source-probe";\n');
    expect(await build()).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(cli(), "utf8")).toContain("changed-source-probe");
  });

  it("runs when a file it wrote is gone", async () => {
    const chunks = join(copy.dir(), "dist", "chunks");
    const [first] = readdirSync(chunks).filter((name) => name.endsWith(".js"));
    rmSync(join(chunks, first!));
    expect(await build()).toMatchObject({ code: 0, stderr: "" });
    expect(readdirSync(chunks)).toContain(first);
  });
});
