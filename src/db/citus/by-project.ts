/**
 * Grouping by project for statements about rows of several projects. On Citus
 * a statement that locks rows (FOR UPDATE) or names rows by key runs on one
 * node only when it names one project (db/citus/layout.ts), so such statements
 * go project by project; projects in name order, and keys in order within
 * each, so that two transactions locking overlapping rows take them in the
 * same order and wait rather than deadlock. On one server it costs a statement
 * per project in the batch (one, mostly).
 */

/** `items` by `projectOf(item)`, the projects in name order. */
export function byProject<T>(items: Iterable<T>, projectOf: (item: T) => string): [string, T[]][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const project = projectOf(item);
    const group = groups.get(project);
    if (group) group.push(item);
    else groups.set(project, [item]);
  }
  return [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
