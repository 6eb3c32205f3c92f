/**
 * The embedded database where Postgres's own account cannot go: as root,
 * Postgres runs as user `postgres`, which cannot enter a project in a mode-700
 * folder (a clone in /root, or under `mktemp -d`). Root runs copy the
 * binaries and relocate the data; every user checks the permission-bit rules
 * and the copy/relocation steps with a made-up account that cannot enter the
 * folders, and runs a real cluster from a mode-700 folder.
 */
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reachableBinaries } from "../src/db/embedded/binaries-copy";
import { createSql } from "../src/db/client";
import { clusterDirectory } from "../src/db/embedded/cluster-location";
import { blockingDirectory, untrustedReason } from "../src/db/embedded/directory-permissions";
import { startEmbeddedPostgres } from "../src/db/embedded/cluster";
import { EmbeddedDatabaseError } from "../src/db/embedded/errors";
import type { Account } from "../src/db/embedded/postgres-account";
import { installedPostgresBinaries } from "../src/db/embedded/postgres-binaries";

const asRoot = process.getuid!() === 0;
const me: Account = { name: "me", uid: process.getuid!(), gid: process.getgid!() };
/** An account that owns nothing here and is in none of our groups. */
const stranger: Account = { name: "stranger", uid: me.uid === 4242 ? 4243 : 4242, gid: me.gid === 4242 ? 4243 : 4242 };
const groupMate: Account = { name: "mate", uid: stranger.uid, gid: me.gid };

const made: string[] = [];
afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** A new folder under the OS tmpdir with `mode`. */
function folder(mode: number): string {
  const dir = mkdtempSync(join(tmpdir(), "dispatch-root-"));
  chmodSync(dir, mode);
  made.push(dir);
  return dir;
}

/** A small stand-in for a `native/` folder: an executable, a library and a symlink to it. */
function fakeNative(parent: string): string {
  const native = join(parent, "native");
  mkdirSync(join(native, "bin"), { recursive: true });
  mkdirSync(join(native, "lib"));
  writeFileSync(join(native, "bin", "postgres"), "#!/bin/sh\n", { mode: 0o700 });
  writeFileSync(join(native, "lib", "libpq.so.5.17"), "", { mode: 0o600 });
  symlinkSync("libpq.so.5.17", join(native, "lib", "libpq.so.5"));
  return native;
}

describe("reachability", () => {
  it("is read from the permission bits of every folder on the way, owner bits first", () => {
    const base = folder(0o700);
    const inner = join(base, "a", "b");
    mkdirSync(inner, { recursive: true });
    [join(base, "a"), inner].forEach((dir) => chmodSync(dir, 0o755));
    const real = realpathSync(base);
    expect(blockingDirectory(inner, me)).toBeNull();
    expect(blockingDirectory(inner, stranger)).toBe(real);
    expect(blockingDirectory(inner, groupMate)).toBe(real);
    chmodSync(base, 0o750);
    expect(blockingDirectory(inner, groupMate)).toBeNull();
    expect(blockingDirectory(inner, stranger)).toBe(real);
    chmodSync(base, 0o711);
    expect(blockingDirectory(inner, stranger)).toBeNull();
    chmodSync(join(base, "a"), 0o700);
    expect(blockingDirectory(inner, stranger)).toBe(join(real, "a"));
    // The owner's bits decide for the owner, even when others may enter.
    chmodSync(join(base, "a"), 0o077);
    expect(blockingDirectory(join(base, "a"), me)).toBe(join(real, "a"));
    expect(blockingDirectory(join(base, "a"), stranger)).toBeNull();
    chmodSync(join(base, "a"), 0o755);
  });

  it("trusts a folder only if nobody but root or this user can change it or its ancestors", () => {
    const dir = folder(0o755);
    expect(untrustedReason(dir)).toBeNull();
    chmodSync(dir, 0o775);
    expect(untrustedReason(dir)).toMatch(/writable by other users \(mode 775\)/);
    // World-writable with the sticky bit (as /tmp) is fine above the folder, not for the folder itself.
    chmodSync(dir, 0o1777);
    expect(untrustedReason(dir)).toMatch(/mode 1777/);
    mkdirSync(join(dir, "inner"));
    chmodSync(join(dir, "inner"), 0o755);
    expect(untrustedReason(join(dir, "inner"))).toBeNull();
    chmodSync(dir, 0o777);
    expect(untrustedReason(join(dir, "inner"))).toMatch(/writable by other users \(mode 777\)/);
  });
});

describe("binaries an account cannot reach", () => {
  it("are copied once into the system folder, open to it, symlinks kept", () => {
    const home = folder(0o700);
    const binaries = { native: fakeNative(home), version: "test-1" };
    const systemDir = folder(0o755);
    const copy = reachableBinaries(binaries, systemDir, stranger);
    expect(copy).toBe(join(systemDir, "binaries", "postgres-test-1"));
    expect(statSync(join(copy, "bin", "postgres")).mode & 0o777).toBe(0o755);
    expect(statSync(join(copy, "lib", "libpq.so.5.17")).mode & 0o777).toBe(0o644);
    expect(statSync(copy).mode & 0o777).toBe(0o755);
    expect(readlinkSync(join(copy, "lib", "libpq.so.5"))).toBe("libpq.so.5.17");
    expect(blockingDirectory(join(copy, "bin"), stranger)).toBeNull();

    writeFileSync(join(copy, "marker"), "");
    expect(reachableBinaries(binaries, systemDir, stranger)).toBe(copy);
    expect(existsSync(join(copy, "marker"))).toBe(true);
    // Reachable binaries are used where they are.
    [home, binaries.native, join(binaries.native, "bin")].forEach((dir) => chmodSync(dir, 0o711));
    expect(reachableBinaries(binaries, systemDir, stranger)).toBe(binaries.native);
  });

  it("are never taken from a copy another user could have planted or changed", () => {
    const binaries = { native: fakeNative(folder(0o700)), version: "test-2" };
    const systemDir = folder(0o755);
    mkdirSync(join(systemDir, "binaries", "postgres-test-2"), { recursive: true });
    chmodSync(join(systemDir, "binaries"), 0o755);
    chmodSync(join(systemDir, "binaries", "postgres-test-2"), 0o777);
    expect(() => reachableBinaries(binaries, systemDir, stranger)).toThrow(EmbeddedDatabaseError);
    expect(() => reachableBinaries(binaries, systemDir, stranger)).toThrow(/postgres-test-2 is writable by other users/);
    chmodSync(systemDir, 0o775);
    expect(() => reachableBinaries(binaries, systemDir, stranger)).toThrow(/writable by other users \(mode 775\).*DATABASE_URL/);
  });
});

describe("a data folder an account cannot enter", () => {
  it("moves to the system folder, linked from the data folder, and is found again", () => {
    const home = folder(0o700);
    const dataDir = join(home, ".dispatch");
    mkdirSync(join(dataDir, "pg"), { recursive: true });
    const systemDir = folder(0o755);
    const notices: string[] = [];
    const cluster = clusterDirectory(dataDir, systemDir, stranger, (line) => notices.push(line));
    expect(cluster).toMatch(new RegExp(`^${join(systemDir, "clusters")}/dispatch-root-\\w+-[0-9a-f]{8}$`));
    expect(readlinkSync(join(dataDir, "pg"))).toBe(cluster);
    expect(notices).toEqual([expect.stringContaining(`Embedded database data: ${cluster}`)]);
    expect(notices[0]).toContain(`cannot enter ${realpathSync(home)} (mode 700)`);
    expect(clusterDirectory(dataDir, systemDir, stranger, (line) => notices.push(line))).toBe(cluster);
    expect(notices).toHaveLength(2);
  });

  it("stays where it is when it already holds a cluster, or when the system folder cannot be made, saying what to do", () => {
    const home = folder(0o700);
    mkdirSync(join(home, "data", "pg"), { recursive: true });
    writeFileSync(join(home, "data", "pg", "PG_VERSION"), "17\n");
    expect(() => clusterDirectory(join(home, "data"), folder(0o755), stranger, () => {})).toThrow(/cannot be run: .*DISPATCH_DATA_DIR/);
    const file = join(folder(0o755), "file");
    writeFileSync(file, "");
    mkdirSync(join(home, "other"));
    expect(() => clusterDirectory(join(home, "other"), join(file, "system"), stranger, () => {})).toThrow(
      /nor be moved to .*file\/system\/clusters.*DISPATCH_DATA_DIR/,
    );
  });
});

describe("the embedded database", () => {
  it("runs from a binaries folder and a data folder only their owner can enter, keeping the data across restarts", async () => {
    const home = folder(0o700);
    const installed = installedPostgresBinaries();
    cpSync(installed.native, join(home, "native"), { recursive: true, verbatimSymlinks: true });
    const options = {
      binaries: { native: join(home, "native"), version: installed.version },
      systemDir: folder(0o755),
      notices: [] as string[],
    };
    const start = () => startEmbeddedPostgres(join(home, "data"), { ...options, notice: (line) => options.notices.push(line) });

    const first = await start();
    try {
      const sql = createSql(first.url, 1);
      await sql`create table kept (note text)`;
      await sql`insert into kept values ('still here')`;
      await sql.end();
    } finally {
      await first.stop();
    }
    const second = await start();
    try {
      const sql = createSql(second.url, 1);
      expect(await sql`select note from kept`).toEqual([{ note: "still here" }]);
      await sql.end();
    } finally {
      await second.stop();
    }
    // Root's `postgres` account cannot enter `home`: binaries copied, data relocated. Others run in place.
    expect(existsSync(join(options.systemDir, "binaries", `postgres-${installed.version}`, "bin", "postgres"))).toBe(asRoot);
    expect(lstatSync(join(home, "data", "pg")).isSymbolicLink()).toBe(asRoot);
    expect(options.notices).toHaveLength(asRoot ? 2 : 0);
  });

  it("stops with a message, not a crash, when a binary cannot be run", async () => {
    const home = folder(0o700);
    const native = fakeNative(home);
    writeFileSync(join(native, "bin", "initdb"), "#!/bin/sh\n", { mode: 0o644 });
    const start = startEmbeddedPostgres(join(home, "data"), {
      binaries: { native, version: "not-runnable" },
      systemDir: folder(0o755),
      notice: () => {},
    });
    await expect(start).rejects.toThrow(EmbeddedDatabaseError);
    await expect(start).rejects.toThrow(/initdb failed \(could not run \S+\/bin\/initdb.*: EACCES\)/);
  });
});
