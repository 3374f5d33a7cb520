// Roles as the API shows them (wire/roles.go), the built-in roles' grants,
// and the permission editor's rows.

export interface Permission {
  actions: string[];
  namespaces: string[];
  queues: string[];
}

export interface Role {
  name: string;
  description: string;
  permissions: Permission[];
  builtin: boolean;
  created_at?: string;
  updated_at?: string;
}

export interface RoleList {
  roles: Role[];
}

/** Every action a role may grant (tenancy.AllActions in tenancy/permissions.go). */
export const ALL_ACTIONS = [
  "job.enqueue",
  "job.work",
  "job.read",
  "job.manage",
  "queue.read",
  "queue.manage",
  "schedule.read",
  "schedule.manage",
  "namespace.read",
  "namespace.manage",
  "key.read",
  "key.manage",
  "usage.read",
  "backup.read",
  "backup.manage",
  "webhook.read",
  "webhook.manage",
] as const;

/** What a permission row's action select offers: each action, each family ("job.*"), and everything. */
export const ACTION_CHOICES: string[] = ["*", ...Array.from(new Set(ALL_ACTIONS.map((a) => a.split(".")[0] + ".*"))), ...ALL_ACTIONS];

/**
 * The built-in roles' grants: a copy of tenancy.BuiltinPolicies in
 * tenancy/rbac.go (role, tenant, object, action), which hold in every
 * tenant over every namespace and queue. Keep the two in step.
 */
export const BUILTIN_POLICIES: readonly (readonly [string, string, string, string])[] = [
  ["owner", "*", "*", "*"],
  ["admin", "*", "*", "*"],
  ["developer", "*", "*", "job.*"],
  ["developer", "*", "*", "queue.*"],
  ["developer", "*", "*", "schedule.*"],
  ["developer", "*", "*", "namespace.read"],
  ["developer", "*", "*", "backup.read"],
  ["developer", "*", "*", "webhook.*"],
  ["producer", "*", "*", "job.enqueue"],
  ["producer", "*", "*", "job.read"],
  ["producer", "*", "*", "queue.read"],
  ["worker", "*", "*", "job.work"],
  ["worker", "*", "*", "job.read"],
  ["worker", "*", "*", "queue.read"],
  ["viewer", "*", "*", "job.read"],
  ["viewer", "*", "*", "queue.read"],
  ["viewer", "*", "*", "schedule.read"],
  ["viewer", "*", "*", "namespace.read"],
  ["viewer", "*", "*", "backup.read"],
  ["viewer", "*", "*", "webhook.read"],
  ["billing", "*", "*", "usage.read"],
];

/** The built-in roles in the API's order (tenancy.TenantRoles). */
export const BUILTIN_ROLES = ["owner", "admin", "developer", "producer", "worker", "viewer", "billing"] as const;

/** The built-in roles' descriptions (gateway/roles.go builtinDescriptions), for before the API answers. */
export const BUILTIN_DESCRIPTIONS: Record<string, string> = {
  owner: "Everything in the tenant, including keys of every role",
  admin: "Everything in the tenant but its SSO configuration, including keys of every role but owner",
  developer: "Jobs, queues and schedules; reads namespaces",
  producer: "Enqueues and reads jobs; reads queues",
  worker: "Fetches and works jobs; reads jobs and queues",
  viewer: "Reads jobs, queues, schedules and namespaces",
  billing: "Reads usage and invoices",
};

export function isBuiltinRole(name: string): boolean {
  return (BUILTIN_ROLES as readonly string[]).includes(name);
}

/** builtinActions are the action patterns a built-in role holds ("job.*", "*"). */
export function builtinActions(role: string): string[] {
  return BUILTIN_POLICIES.filter((p) => p[0] === role).map((p) => p[3]);
}

// tenancy/roles.go rank: a key may mint keys of roles ranking at or below
// its own, and only owner and admin keys mint at all among built-in roles.
const RANK: Record<string, number> = { owner: 4, admin: 3, developer: 2, producer: 1, worker: 1, viewer: 1, billing: 1 };

/**
 * mayGrantRole mirrors the gateway's rank rule (gateway/grant.go
 * mayGrantRank) so the key dialog offers only roles the server could
 * accept: a built-in key grants built-in roles ranking at or below its
 * own (owner and admin only); a custom-role key never grants owner or
 * admin. Where either role is custom the server also checks the grant is
 * within what the caller holds, which only it can tell.
 */
export function mayGrantRole(myRole: string, role: string): boolean {
  const mineBuiltin = isBuiltinRole(myRole);
  const theirsBuiltin = isBuiltinRole(role);
  if (mineBuiltin && theirsBuiltin) return RANK[myRole] >= 3 && RANK[myRole] >= RANK[role];
  if (!mineBuiltin) return role !== "owner" && role !== "admin";
  return true;
}

/** One row of the permission editor: one action pattern over namespace and queue patterns (as typed). */
export interface PermRow {
  action: string;
  namespaces: string;
  queues: string;
}

/** splitPatterns reads "a, b  c" as ["a", "b", "c"], without blanks or repeats. */
export function splitPatterns(s: string): string[] {
  const out: string[] = [];
  for (const p of s.split(/[\s,]+/)) if (p && !out.includes(p)) out.push(p);
  return out;
}

export const joinPatterns = (ps: string[]) => ps.join(", ");

/** rowsOf spreads permissions into one editor row per action. */
export function rowsOf(ps: Permission[]): PermRow[] {
  const out: PermRow[] = [];
  for (const p of ps) {
    for (const a of p.actions) out.push({ action: a, namespaces: joinPatterns(p.namespaces), queues: joinPatterns(p.queues) });
  }
  return out;
}

/**
 * permissionsOf gathers editor rows back into permissions: rows over the
 * same namespace and queue patterns become one permission with their
 * actions (a role has at most 64 permissions). Empty pattern fields mean
 * "*"; the order of first appearance is kept.
 */
export function permissionsOf(rows: PermRow[]): Permission[] {
  const out: Permission[] = [];
  const byScope = new Map<string, Permission>();
  for (const r of rows) {
    if (!r.action) continue;
    const namespaces = splitPatterns(r.namespaces);
    const queues = splitPatterns(r.queues);
    const p: Permission = { actions: [r.action], namespaces: namespaces.length ? namespaces : ["*"], queues: queues.length ? queues : ["*"] };
    const key = p.namespaces.join("\n") + "\u0000" + p.queues.join("\n");
    const seen = byScope.get(key);
    if (seen) {
      if (!seen.actions.includes(r.action)) seen.actions.push(r.action);
    } else {
      byScope.set(key, p);
      out.push(p);
    }
  }
  return out;
}

/** describePermission writes a permission as "job.read, queue.read in ns: * · queues: emails.*". */
export function describePermission(p: Permission): string {
  return `${p.actions.join(", ")} in namespaces ${p.namespaces.join(", ")} · queues ${p.queues.join(", ")}`;
}

const LABEL = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** roleNameError is why name cannot be a custom role's name (tenancy.ValidateRoleName), or "". */
export function roleNameError(name: string): string {
  if (!LABEL.test(name)) return "1-63 lowercase letters, digits or '-', starting with a letter or digit";
  if (isBuiltinRole(name) || name === "operator") return `"${name}" is a built-in role`;
  return "";
}
