// An element token's form, "<snapshot_id>:<element_index>": the registry that hands tokens out (routing/
// snapshots.ts) and the CDP route that names an element of the tab's latest snapshot write it the same way.

/** What every token of a snapshot starts with: the compact get_window_state lists indices only. */
export function elementTokenPrefix(snapshotId: string): string {
  return `${snapshotId}:`;
}

/** The token of element `index` of snapshot `snapshotId`. */
export function elementToken(snapshotId: string, index: number): string {
  return `${elementTokenPrefix(snapshotId)}${index}`;
}
