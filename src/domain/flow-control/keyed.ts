/** A message with a flow-control key, told from one without by `isKeyed` (so no `flowControlKey!` is needed after). */

/** `M` whose flow-control key is set. */
export type Keyed<M extends { flowControlKey: string | null }> = M & { flowControlKey: string };

/** Whether `message` has a flow-control key. */
export function isKeyed<M extends { flowControlKey: string | null }>(message: M): message is Keyed<M> {
  return message.flowControlKey !== null;
}

/** A flow-control key: a name within its project (two projects' keys of one name are two keys). */
export interface FlowKey {
  project: string;
  key: string;
}

/** The key of a keyed message. */
export const flowKeyOf = (message: { project: string; flowControlKey: string }): FlowKey => ({
  project: message.project,
  key: message.flowControlKey,
});

/** Whether two keys are the same key. */
export const sameFlowKey = (a: FlowKey, b: FlowKey) => a.project === b.project && a.key === b.key;

/** `keys` without repeats, ordered by project then name: the order their rows are locked in. */
export function sortedFlowKeys(keys: FlowKey[]): FlowKey[] {
  const unique = new Map(keys.map((k) => [`${k.project}\u0000${k.key}`, k]));
  return [...unique.values()].sort((a, b) => compare(a.project, b.project) || compare(a.key, b.key));
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
