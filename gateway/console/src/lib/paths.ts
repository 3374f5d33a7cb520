// The console's paths of one job, queue or batch (below /console).
import { enc } from "../api";

export const jobPath = (id: string) => "/jobs/" + enc(id);
export const queuePath = (name: string) => "/queues/" + enc(name);
export const batchPath = (id: string) => "/batches/" + enc(id);

/** CONTROL_PATHS are the screens of tenant administration, served by the control plane: a node's local API (Session.local) has none of them. */
export const CONTROL_PATHS = ["/namespaces", "/backups", "/shards", "/keys", "/roles", "/audit", "/usage", "/invoices"];

/** needsControl reports whether the screen at path is one of tenant administration's. */
export function needsControl(path: string): boolean {
  return CONTROL_PATHS.some((p) => path === p || path.startsWith(p + "/"));
}
