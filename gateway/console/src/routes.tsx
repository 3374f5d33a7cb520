// Every screen and its path under /console.
import type { ComponentChildren } from "preact";
import { Dashboard } from "./screens/dashboard";
import { Queues } from "./screens/queues";
import { QueueDetail } from "./screens/queue";
import { JobDetail } from "./screens/job";
import { Jobs } from "./screens/jobs";
import { DeadLetter } from "./screens/dead";
import { Schedules } from "./screens/schedules";
import { Batches, BatchDetail } from "./screens/batches";
import { Workers } from "./screens/workers";
import { Events } from "./screens/events";
import { Namespaces } from "./screens/namespaces";
import { Keys } from "./screens/keys";
import { Roles } from "./screens/roles";
import { Usage } from "./screens/usage";
import { Invoices, InvoiceDetail } from "./screens/invoices";
import { Backups } from "./screens/backups";
import { Shards } from "./screens/shards";
import { Webhooks, WebhookDetail } from "./screens/webhooks";
import { Alerts } from "./screens/alerts";
import { Audit } from "./screens/audit";
import { Costs } from "./screens/costs";
import { HeldJobs } from "./screens/held";

export const routes: { path: string; render: (p: Record<string, string>) => ComponentChildren }[] = [
  { path: "/", render: () => <Dashboard /> },
  { path: "/queues", render: () => <Queues /> },
  { path: "/queues/:name", render: (p) => <QueueDetail name={p.name} /> },
  { path: "/jobs", render: () => <Jobs /> },
  { path: "/jobs/:id", render: (p) => <JobDetail id={p.id} /> },
  { path: "/dead", render: () => <DeadLetter /> },
  { path: "/held", render: () => <HeldJobs /> },
  { path: "/schedules", render: () => <Schedules /> },
  { path: "/batches", render: () => <Batches /> },
  { path: "/batches/:id", render: (p) => <BatchDetail id={p.id} /> },
  { path: "/workers", render: () => <Workers /> },
  { path: "/events", render: () => <Events /> },
  { path: "/webhooks", render: () => <Webhooks /> },
  { path: "/webhooks/:id", render: (p) => <WebhookDetail id={p.id} /> },
  { path: "/alerts", render: () => <Alerts /> },
  { path: "/costs", render: () => <Costs /> },
  { path: "/audit", render: () => <Audit /> },
  { path: "/namespaces", render: () => <Namespaces /> },
  { path: "/backups", render: () => <Backups /> },
  { path: "/shards", render: () => <Shards /> },
  { path: "/keys", render: () => <Keys /> },
  { path: "/roles", render: () => <Roles /> },
  { path: "/usage", render: () => <Usage /> },
  { path: "/invoices", render: () => <Invoices /> },
  { path: "/invoices/:id", render: (p) => <InvoiceDetail id={p.id} /> },
];
