/**
 * Publishing: each request is validated and resolved first (prepare.ts; a bad
 * one is a 4xx that stores nothing), then the messages of concurrent requests
 * share one statement — or one transaction when some need a deduplication
 * window, a workflow run or a queue — and one NOTIFY (README "Architecture:
 * the delivery engine"). A 2xx still means committed: each request's promise
 * resolves after its batch commits.
 */
import type { Sql } from "../../db/client";
import { Coalescer } from "../../db/coalescer";
import type { NewMessage, PublishResult } from "../messages/new-message";
import { insertMessages } from "./insert";
import type { MessageSettings } from "./options";
import { type PreparedRequest, prepareMessages, type PublishRequest, type PublishResponse, type PublishSettings } from "./prepare";

/** Publishes requests through shared transactions. */
export class Publisher {
  private readonly coalescer: Coalescer<NewMessage[], PublishResult[]>;

  constructor(
    private readonly sql: Sql,
    private readonly settings: PublishSettings,
  ) {
    this.coalescer = new Coalescer(sql, (tx, groups) => storeGroups(tx, groups, settings), {
      maxBatch: 500,
      // Two batches in flight: one commits while the next fills. More would split the
      // waiting requests into smaller batches, each paying a commit and a NOTIFY.
      maxConcurrent: 2,
      transactional: (groups) => groups.some((group) => group.some(needsTransaction)),
    });
  }

  /** Validates, stores and schedules the requests' messages; one response per request. */
  async publish(requests: PublishRequest[]): Promise<PublishResponse[]> {
    const prepared: PreparedRequest[] = [];
    for (const request of requests) prepared.push(await prepareMessages(this.sql, request, this.settings));
    const results = await this.coalescer.submit(prepared.flatMap((p) => p.messages));
    return responses(prepared, results);
  }
}

/** Each request's answer from the results of all their messages, in order. */
function responses(prepared: PreparedRequest[], results: PublishResult[]): PublishResponse[] {
  let next = 0;
  return prepared.map(({ messages, kind }) => {
    const own = results.slice(next, (next += messages.length));
    if (kind === "group") return own;
    // The provider URL behind an API destination is configuration, not the publisher's business.
    return kind === "api" ? { messageId: own[0]!.messageId, deduplicated: own[0]!.deduplicated } : own[0]!;
  });
}

/**
 * Whether storing the message takes more than the one insert statement: a
 * deduplication window to claim, a workflow run to bind, a queue to lock.
 */
function needsTransaction(message: NewMessage): boolean {
  return message.deduplicationKey !== null || message.workflow !== null || message.queueName !== null;
}

/** Stores several requests' messages with one `insertMessages`, splitting the results back. */
async function storeGroups(tx: Parameters<typeof insertMessages>[0], groups: NewMessage[][], settings: MessageSettings) {
  const results = await insertMessages(tx, groups.flat(), settings);
  let next = 0;
  return groups.map((group) => results.slice(next, (next += group.length)));
}
