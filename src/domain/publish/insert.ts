/**
 * Storing new messages: their deduplication windows, their workflow runs
 * (through the binding hook), their flow-control keys' limits, the rows (each
 * row is its CREATED event) and their queues' admission, all in the caller's transaction. Publishing,
 * fan-out, callbacks, DLQ retries and workflow continuations all come through
 * `insertMessages`.
 */
import type { Tx } from "../../db/client";
import type { ClaimedMessage } from "../../db/queries/claim-messages";
import { insertClaimedMessageRows, insertMessageRows } from "../../db/queries/insert-messages";
import { configureKeys } from "../flow-control/keys";
import type { NewMessage, PublishResult } from "../messages/new-message";
import { lockQueues, sortedQueues, startQueuedMessages } from "../messages/queue-admission";
import { claimDeduplicationKeys, type DeduplicationClaim, projectKey } from "./deduplication";
import type { MessageSettings } from "./options";
import { bindWorkflowMessages } from "./workflow-binding";

/** Messages to store already claimed by a worker of this process (see `canClaimAtInsert`). */
export interface InsertClaim {
  workerId: string;
  /** The ids of the messages to claim. */
  ids: Set<string>;
  /** A claim per project (on Citus), or one for all (LocalDelivery's `claimsByProject`). */
  byProject: boolean;
}

/**
 * Whether a message may be stored already claimed: due now, and held by
 * nothing the work list decides (a queue's order, a flow-control key's
 * limits, a workflow run, a deduplication window, which takes a transaction).
 */
export function canClaimAtInsert(message: NewMessage): boolean {
  return (
    message.delayMs === 0 &&
    message.notBeforeMs === null &&
    message.queueName === null &&
    message.flowControl === null &&
    message.workflow === null &&
    message.deduplicationKey === null
  );
}

/**
 * Stores `messages` and schedules their first delivery. A message whose
 * deduplication key is held by a live window (or by an earlier message of the
 * same batch) is not stored; its result carries the holder's id.
 */
export async function insertMessages(tx: Tx, messages: NewMessage[], settings: MessageSettings): Promise<PublishResult[]> {
  return (await insertMessagesClaiming(tx, messages, settings, null)).results;
}

/**
 * `insertMessages`, storing the messages `claim` names already claimed by its
 * worker (each must pass `canClaimAtInsert`); returns them as claimed, so that
 * their attempts start once the statement committed.
 */
export async function insertMessagesClaiming(
  tx: Tx,
  messages: NewMessage[],
  settings: MessageSettings,
  claim: InsertClaim | null,
): Promise<{ results: PublishResult[]; claimed: ClaimedMessage[] }> {
  const deduplicated = await deduplicate(tx, messages, settings.deduplicationWindowMs);
  const duplicateOf = new Map([...deduplicated.duplicateOf, ...(await bindWorkflowMessages(tx, deduplicated.fresh))]);
  const fresh = deduplicated.fresh.filter((message) => !duplicateOf.has(message.id));
  let claimed: ClaimedMessage[] = [];
  if (fresh.length > 0) {
    const queues = sortedQueues(fresh.flatMap((message) => (message.queueName === null ? [] : [{ project: message.project, name: message.queueName }])));
    // Locking the queues first makes publish order (`seq`) the start order.
    await lockQueues(tx, queues);
    await configureKeys(tx, fresh.flatMap(({ project, flowControl }) => (flowControl === null ? [] : [{ project, ...flowControl }])));
    claimed = await insertRows(tx, fresh, settings.delayScale, claim);
    for (const queue of queues) await startQueuedMessages(tx, queue);
  }
  const results = messages.map((message) => {
    const holder = duplicateOf.get(message.id);
    return { messageId: holder ?? message.id, url: message.url, deduplicated: holder !== undefined };
  });
  return { results, claimed };
}

async function deduplicate(tx: Tx, messages: NewMessage[], windowMs: number) {
  const duplicateOf = new Map<string, string>();
  const firstByKey = new Map<string, string>();
  const claims: DeduplicationClaim[] = [];
  for (const message of messages) {
    if (message.deduplicationKey === null) continue;
    // A batch may hold several projects' publishes: each project deduplicates apart.
    const key = projectKey(message.project, message.deduplicationKey);
    const first = firstByKey.get(key);
    if (first !== undefined) duplicateOf.set(message.id, first);
    else {
      firstByKey.set(key, message.id);
      claims.push({ project: message.project, key: message.deduplicationKey, messageId: message.id });
    }
  }
  const held = await claimDeduplicationKeys(tx, claims, windowMs);
  for (const [key, holder] of held) {
    const claimant = firstByKey.get(key)!;
    duplicateOf.set(claimant, holder);
    for (const [id, first] of duplicateOf) if (first === claimant) duplicateOf.set(id, holder);
  }
  return { fresh: messages.filter((message) => !duplicateOf.has(message.id)), duplicateOf };
}

/** Stores the batch in one statement (`insert-messages.ts`); returns the rows stored claimed. */
async function insertRows(tx: Tx, messages: NewMessage[], delayScale: number, claim: InsertClaim | null): Promise<ClaimedMessage[]> {
  if (claim === null || claim.ids.size === 0) {
    await insertMessageRows(tx, messages, delayScale);
    return [];
  }
  const claimed = messages.map((message) => claim.ids.has(message.id));
  return insertClaimedMessageRows(tx, messages, delayScale, claimed, claim.workerId, claim.byProject);
}
