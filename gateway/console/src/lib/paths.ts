// The console's paths of one job, queue or batch (below /console).
import { enc } from "../api";

export const jobPath = (id: string) => "/jobs/" + enc(id);
export const queuePath = (name: string) => "/queues/" + enc(name);
export const batchPath = (id: string) => "/batches/" + enc(id);
