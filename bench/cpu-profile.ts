/**
 * Reads a V8 `.cpuprofile` (written by `node --cpu-prof`) into where the
 * process's busy time went: self time per function and per owner (Dispatch's
 * own files, each npm package, Node's internals, GC), as shares of the time
 * the process was not idle. bench/profile.ts prints it; bench/READING.md
 * quotes it before and after a hot-path change.
 */
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where busy time went, µs, largest first. */
export interface ProfileSummary {
  /** Sampled time not spent idle, µs. */
  busyMicros: number;
  owners: { owner: string; micros: number }[];
  /** The same time with Node's and native frames charged to the package or Dispatch folder that called them. */
  callers: { owner: string; micros: number }[];
  functions: { name: string; owner: string; micros: number }[];
}

/** Who a frame belongs to: a package, one of Dispatch's folders, Node, GC or V8's own work. */
export function ownerOf(url: string, functionName: string): string {
  if (!url) {
    if (functionName === "(garbage collector)") return "GC";
    if (functionName === "(idle)") return "idle";
    if (functionName === "(program)") return "V8 (program)";
    return "native";
  }
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (inPackage) return inPackage[1]!;
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`;
  const own = /\/(src|bin|dist)\/(.*)$/.exec(url);
  if (own) {
    const parts = own[2]!.split("/");
    return `dispatch ${parts.length > 1 ? parts.slice(0, -1).join("/") : parts[0]}`;
  }
  return url.split("/").slice(-2).join("/");
}

/**
 * Where a frame of a bundled file (dist/cli.js) came from, through the file's
 * source map: src/<path> and line, so owners are Dispatch's folders.
 */
function sourceMapper(): (frame: ProfileNode["callFrame"]) => { url: string; lineNumber: number } {
  const maps = new Map<string, SourceMap | null>();
  return (frame) => {
    if (!frame.url.startsWith("file://") || !frame.url.endsWith(".js")) return frame;
    if (!maps.has(frame.url)) {
      const mapFile = `${fileURLToPath(frame.url)}.map`;
      maps.set(frame.url, existsSync(mapFile) ? new SourceMap(JSON.parse(readFileSync(mapFile, "utf8"))) : null);
    }
    const entry = maps.get(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
    if (!entry || !("originalSource" in entry)) return frame;
    return { url: entry.originalSource, lineNumber: entry.originalLine };
  };
}

/** Node's own modules and native code, which run on someone's behalf (GC stays GC). */
const isRuntime = (owner: string) => owner === "native" || owner.startsWith("node:");

/** Self time of every sample attributed to its node, then summed by function and by owner. */
export function summariseProfile(file: string): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const original = sourceMapper();
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicros = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const ownerOfNode = (id: number) => {
    const frame = byId.get(id)!.callFrame;
    return ownerOf(original(frame).url, frame.functionName);
  };
  /** The nearest frame up the stack that is Dispatch's or a package's. */
  const callerOf = (id: number, owner: string) => {
    if (!isRuntime(owner)) return owner;
    for (let up = parents.get(id); up !== undefined; up = parents.get(up)) {
      const above = ownerOfNode(up);
      if (!isRuntime(above)) return above;
    }
    return owner;
  };
  const owners = new Map<string, number>();
  const callers = new Map<string, number>();
  const functions = new Map<string, { name: string; owner: string; micros: number }>();
  let busyMicros = 0;
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id)!.callFrame;
    const { functionName } = frame;
    const { url, lineNumber } = original(frame);
    const owner = ownerOf(url, functionName);
    if (owner === "idle") continue;
    busyMicros += micros;
    owners.set(owner, (owners.get(owner) ?? 0) + micros);
    const caller = callerOf(id, owner);
    callers.set(caller, (callers.get(caller) ?? 0) + micros);
    const name = `${functionName || "(anonymous)"} ${url ? `${url.split("/").slice(-1)[0]}:${lineNumber + 1}` : ""}`.trim();
    const entry = functions.get(name) ?? { name, owner, micros: 0 };
    entry.micros += micros;
    functions.set(name, entry);
  }
  const largest = <T extends { micros: number }>(items: Iterable<T>) => [...items].sort((a, b) => b.micros - a.micros);
  return {
    busyMicros,
    owners: largest([...owners].map(([owner, micros]) => ({ owner, micros }))),
    callers: largest([...callers].map(([owner, micros]) => ({ owner, micros }))),
    functions: largest(functions.values()),
  };
}

/**
 * The summary as text: owners and the top functions, as shares of busy time
 * and as µs of the measured CPU per message (`microsPerMessage`, from /proc
 * over the measured window; the profile also covers start-up and warm-up, so
 * only its shares are used).
 */
export function renderProfile(summary: ProfileSummary, microsPerMessage: number, top = 30): string {
  const fraction = (micros: number) => micros / Math.max(1, summary.busyMicros);
  const share = (micros: number) => `${(100 * fraction(micros)).toFixed(1).padStart(5)} %`;
  const perMessage = (micros: number) => `${(fraction(micros) * microsPerMessage).toFixed(1).padStart(6)} µs/msg`;
  const lines = [`busy ${(summary.busyMicros / 1000).toFixed(0)} ms sampled; ${microsPerMessage.toFixed(0)} µs of CPU per message`, "", "By owner:"];
  for (const { owner, micros } of summary.owners.slice(0, 25)) lines.push(`  ${share(micros)} ${perMessage(micros)}  ${owner}`);
  lines.push("", "By caller (Node's and native time charged to whoever called it):");
  for (const { owner, micros } of summary.callers.slice(0, 25)) lines.push(`  ${share(micros)} ${perMessage(micros)}  ${owner}`);
  lines.push("", `Top ${top} functions (self time):`);
  for (const { name, owner, micros } of summary.functions.slice(0, top)) lines.push(`  ${share(micros)} ${perMessage(micros)}  ${name}  [${owner}]`);
  return lines.join("\n");
}
