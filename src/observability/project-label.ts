/**
 * The `project` label of the per-project metrics, its values bounded: each
 * process labels the first `PROJECT_LABELS` projects it counts by their
 * names, and counts every later one under `other`. A Dispatch with a few
 * dozen teams sees each; one serving thousands of customers' projects keeps
 * its series count (and its Prometheus) bounded, with the total still right.
 */

/** How many projects a process labels by name. */
export const PROJECT_LABELS = 100;
/** The label of the projects past the first `PROJECT_LABELS`. */
export const OTHER_PROJECTS = "other";

/** A process's project label values, first come first labelled. */
export class ProjectLabels {
  private readonly named = new Set<string>();

  constructor(private readonly limit = PROJECT_LABELS) {}

  /** The label value that counts `project`. */
  of(project: string): string {
    if (this.named.has(project)) return project;
    if (this.named.size >= this.limit) return OTHER_PROJECTS;
    this.named.add(project);
    return project;
  }
}
