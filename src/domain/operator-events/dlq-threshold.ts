/**
 * The DLQ's threshold: an operator event (`dlq.threshold`) when the dead
 * letter queue grows past `DISPATCH_OPERATOR_DLQ_THRESHOLD` entries, once;
 * it is armed again when the DLQ is back under (entries retried, deleted or
 * expired). Whether it is over is a row of `dispatch.settings`
 * (`dlq_threshold`), flipped under its lock, so one replica sends the event.
 */
import type { Tx } from "../../db/client";
import { type OperatorEventSettings, publishOperatorEvents } from "./operator-events";

/** Looks at the DLQ's size against `threshold`; sends the event when it just went past it. Returns whether it is over. */
export async function checkDlqThreshold(tx: Tx, threshold: number, settings: OperatorEventSettings): Promise<boolean> {
  // Counted up to one past the threshold: the check costs the threshold's rows at most, however large the DLQ.
  const [counted] = await tx<{ over: boolean }[]>`
    select count(*) > ${threshold} as over from (select 1 from dispatch.dlq limit ${threshold + 1}) d`;
  const over = counted!.over;
  await tx`insert into dispatch.settings (key, value) values ('dlq_threshold', '{"over": false}') on conflict (key) do nothing`;
  const flipped = await tx`
    update dispatch.settings set value = jsonb_build_object('over', ${over}::boolean), updated_at = now()
    where key = 'dlq_threshold' and (value->>'over')::boolean is distinct from ${over}::boolean
    returning key`;
  if (flipped.length > 0 && over) {
    const [dlq] = await tx<{ size: number }[]>`select count(*)::int as size from dispatch.dlq`;
    await publishOperatorEvents(tx, settings, [{ type: "dlq.threshold", size: dlq!.size, threshold }]);
  }
  return over;
}
