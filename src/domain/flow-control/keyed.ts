/** A message with a flow-control key, told from one without by `isKeyed` (so no `flowControlKey!` is needed after). */

/** `M` whose flow-control key is set. */
export type Keyed<M extends { flowControlKey: string | null }> = M & { flowControlKey: string };

/** Whether `message` has a flow-control key. */
export function isKeyed<M extends { flowControlKey: string | null }>(message: M): message is Keyed<M> {
  return message.flowControlKey !== null;
}
