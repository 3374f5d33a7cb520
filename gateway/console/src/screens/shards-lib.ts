// The tenant's self-hosted shards as the API shows them (wire/shards.go),
// and what the console writes about them: how many nodes joined, and the
// command each node runs to join with a freshly minted token.

export const SHARDS_PATH = "/api/v1/shards";
export const JOIN_TOKENS_PATH = "/api/v1/shards/join-tokens";

/** The docs' page on self-hosted shards. */
export const SELF_HOSTING_URL = "https://github.com/jobbie/jobbie/blob/main/docs/operate/self-hosting.md";

export interface OwnedShard {
  id: string;
  name: string;
  /** the nodes that joined so far */
  nodes: string[];
  /** the ids of nodes removed from it: retired, never joining again */
  retired?: string[];
  created_at: string;
  /** the joined nodes whose tunnels the answering gateway holds now */
  connected?: string[];
  /** how many nodes its token joins, when the API says */
  expected_nodes?: number;
  /** when its unspent token expires, when the API says */
  token_expires_at?: string;
  /** the namespaces placed on it, when the API says */
  namespaces?: string[];
  /** its cluster's health, as a node connected to the answering gateway reports it; absent when none answers */
  health?: ClusterHealth;
}

/** ClusterHealth is wire.ClusterHealth: a shard's Raft group as one of its nodes sees it. */
export interface ClusterHealth {
  shard_id: string;
  /** "" while no leader is known */
  leader_id: string;
  healthy: boolean;
  nodes: ClusterNode[];
}

export interface ClusterNode {
  id: string;
  role: "leader" | "follower" | "nonvoter" | string;
  status: "healthy" | "unreachable" | string;
}

export interface OwnedShardList {
  shards: OwnedShard[];
}

/** JoinToken is POST /api/v1/shards/join-tokens's answer: the token, shown this once. */
export interface JoinToken {
  token: string;
  shard_id: string;
  name: string;
  nodes: number;
  expires_at: string;
}

/** Cluster sizes a token joins (Raft groups of 1, 3 or 5). */
export const NODE_COUNTS = [1, 3, 5] as const;

/** How long a token may be used, as the API takes it (1 minute to 24 hours). */
export const EXPIRIES: { value: string; label: string }[] = [
  { value: "15m", label: "15 minutes" },
  { value: "1h", label: "1 hour" },
  { value: "6h", label: "6 hours" },
  { value: "24h", label: "24 hours" },
];
export const DEFAULT_EXPIRY = "1h";

/** MAX_NAME is the longest shard name the server takes. */
export const MAX_NAME = 100;

/** shardNameError is why name cannot name a shard (control's rule: 1-100 printable characters), or "". */
export function shardNameError(name: string): string {
  const t = name.trim();
  if (!t) return "A name is required.";
  if (t.length > MAX_NAME) return `At most ${MAX_NAME} characters.`;
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(t)) return "Printable characters only.";
  return "";
}

/** nodesText is how many nodes joined: "2 of 3" when the API says how many are expected, else "2". */
export function nodesText(sh: Pick<OwnedShard, "nodes" | "expected_nodes">): string {
  const n = sh.nodes.length;
  return sh.expected_nodes ? `${n} of ${sh.expected_nodes}` : String(n);
}

/** shardLabel names a shard in a select: its name and id. */
export function shardLabel(sh: Pick<OwnedShard, "id" | "name">): string {
  return `${sh.name} (${sh.id})`;
}

/** CONTROL_PLACEHOLDER stands for the control plane's URL, which the console does not know. */
export const CONTROL_PLACEHOLDER = "<control-url>";
/** CA_FILE is the hosted service's CA certificate, as the command names it. */
export const CA_FILE = "hosted-ca.crt";
const DATA_DIR = "/var/lib/jobbie";

/** controlArg is the --control-url value: what was typed (trimmed), else the placeholder. */
export function controlArg(typed: string): string {
  return typed.trim() || CONTROL_PLACEHOLDER;
}

/**
 * joinCommands are the commands that join nodes n1…nN with token: n1 starts
 * the cluster (--bootstrap), the others join it through n1's gossip
 * address. Every node shares one gossip key (gossip is always encrypted).
 */
export function joinCommands(token: string, nodes: number, controlUrl: string): string {
  const lines: string[] = [];
  if (nodes > 1) lines.push("# once, copied to every node: head -c 32 /dev/urandom | xxd -p -c 64 > gossip.key");
  else lines.push("# once: head -c 32 /dev/urandom | xxd -p -c 64 > gossip.key");
  for (let i = 1; i <= Math.max(1, nodes); i++) {
    const start = i === 1 ? "--bootstrap" : "--join <n1-gossip-address>";
    lines.push(
      `jobbie shard --node-id n${i} ${start} --join-token ${token} --control-url ${controlArg(controlUrl)} ` +
        `--ca-file ${CA_FILE} --data-dir ${DATA_DIR} --gossip-key-file gossip.key`,
    );
  }
  return lines.join("\n");
}

/** revokeConflict says what a 409 from DELETE /api/v1/shards/{id} means, with the server's message. */
export function revokeConflict(message: string): string {
  return `The shard still holds namespaces, so it cannot be revoked: move or delete them first. (${message})`;
}

/** HealthView is what the health cell shows: a state with its glyph (never colour alone) and words. */
export interface HealthView {
  state: "healthy" | "unhealthy" | "unknown";
  glyph: string;
  text: string;
  /** the leader's line: "leader n1", "no leader", or "" when unknown */
  leader: string;
  /** why, for the cell's title */
  title: string;
}

/** healthView formats a shard's health; absent health is "unknown" (no connected node answered this gateway). */
export function healthView(h: ClusterHealth | undefined): HealthView {
  if (!h) {
    return { state: "unknown", glyph: "?", text: "unknown", leader: "", title: "no node of this shard answered this gateway" };
  }
  const nodes = h.nodes ?? [];
  const down = nodes.filter((n) => n.status !== "healthy").map((n) => n.id);
  const leader = h.leader_id ? `leader ${h.leader_id}` : "no leader";
  const why: string[] = [];
  if (!h.leader_id) why.push("no leader is known");
  if (down.length) why.push(`unreachable: ${down.join(", ")}`);
  if (h.healthy) {
    return { state: "healthy", glyph: "✔", text: "healthy", leader, title: why.length ? why.join("; ") : "a leader and a quorum of voters" };
  }
  return { state: "unhealthy", glyph: "✖", text: "unhealthy", leader, title: why.length ? why.join("; ") : "no quorum of voters" };
}

/** nodeHealthText is one node's role and status as health reports it, e.g. "leader, healthy"; "" when health does not name it. */
export function nodeHealthText(h: ClusterHealth | undefined, id: string): string {
  const n = h?.nodes?.find((x) => x.id === id);
  return n ? `${n.role}, ${n.status}` : "";
}

// Adding nodes to a shard and removing one (POST /api/v1/shards/{id}/join-tokens,
// DELETE /api/v1/shards/{id}/nodes/{node}): the owner's, like minting.

/** nodeTokensPath is where a token joining more nodes to shard id is minted. */
export const nodeTokensPath = (id: string) => `${SHARDS_PATH}/${encodeURIComponent(id)}/join-tokens`;
/** nodePath is one joined node of shard id. */
export const nodePath = (id: string, node: string) => `${SHARDS_PATH}/${encodeURIComponent(id)}/nodes/${encodeURIComponent(node)}`;

/** MAX_SHARD_NODES is the most nodes control lets a shard have joined (a group of 5 with room for replacements). */
export const MAX_SHARD_NODES = 7;
/** MAX_TOKEN_NODES is the most nodes one token joins. */
export const MAX_TOKEN_NODES = 5;

/** addableNodes is how many nodes one token may join to sh now: 1…5, within 7 joined in all (0: none). */
export function addableNodes(sh: Pick<OwnedShard, "nodes">): number {
  return Math.max(0, Math.min(MAX_TOKEN_NODES, MAX_SHARD_NODES - sh.nodes.length));
}

/** A node id as control takes it. */
const NODE_ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/**
 * suggestNodeIds are n fresh ids for new nodes: n<k+1>… past the highest
 * n<k> among taken (the joined nodes and the retired ids of removed
 * ones). The suggestion can be edited.
 */
export function suggestNodeIds(taken: readonly string[], n: number): string[] {
  let top = 0;
  for (const id of taken) {
    const m = /^n(\d+)$/.exec(id);
    if (m) top = Math.max(top, Number(m[1]));
  }
  return Array.from({ length: n }, (_, i) => `n${top + 1 + i}`);
}

/** parseNodeIds splits what was typed (spaces or commas) into ids. */
export function parseNodeIds(typed: string): string[] {
  return typed.split(/[\s,]+/).filter(Boolean);
}

/** nodeIdsError is why ids cannot name n new nodes of a shard whose nodes are taken, or "". */
export function nodeIdsError(ids: readonly string[], n: number, taken: readonly string[]): string {
  if (ids.length !== n) return `Give ${n} node ${n === 1 ? "id" : "ids"} (${ids.length} given).`;
  const bad = ids.find((id) => !NODE_ID_RE.test(id));
  if (bad !== undefined) return `${bad} is not a node id: letters, digits, ".", "_" and "-", at most 63.`;
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup !== undefined) return `${dup} is given twice.`;
  const used = ids.find((id) => taken.includes(id));
  if (used !== undefined) return `${used} is taken: a member's or a removed node's id never joins again.`;
  return "";
}

/** GOSSIP_PLACEHOLDER stands for a member's gossip address, which the console does not know. */
export const gossipPlaceholder = (member: string | undefined) => `<${member ?? "member"}-gossip-address>`;

/**
 * addNodeCommands are the commands that join the new nodes ids to a
 * running shard with token: each joins through a member's gossip address
 * (what was typed, else a placeholder naming the first member), with the
 * gossip key the members share. None bootstraps: the group exists.
 */
export function addNodeCommands(token: string, ids: readonly string[], members: readonly string[], gossipAddr: string, controlUrl: string): string {
  const join = gossipAddr.trim() || gossipPlaceholder(members[0]);
  const lines = ["# the gossip.key the shard's members use, copied to each new node"];
  for (const id of ids) {
    lines.push(
      `jobbie shard --node-id ${id} --join ${join} --join-token ${token} --control-url ${controlArg(controlUrl)} ` +
        `--ca-file ${CA_FILE} --data-dir ${DATA_DIR} --gossip-key-file gossip.key`,
    );
  }
  return lines.join("\n");
}

/** addNodesConflict says what a 409 from minting a token for more nodes means, with the server's message. */
export function addNodesConflict(message: string): string {
  if (/token/i.test(message)) return `The shard's join token still has nodes to join: use it, or mint another once it expires. (${message})`;
  return `The shard would pass ${MAX_SHARD_NODES} nodes: remove nodes first. (${message})`;
}

/**
 * raftRemoveCommand takes node out of its shard's Raft group, run on the
 * machine of survivor (a node that stays) with that node's own credentials
 * (its --data-dir holds them), at that node's listener.
 */
export function raftRemoveCommand(node: string, survivor: string | undefined): string {
  const at = survivor ?? "member";
  return `jobbie shard remove ${node} --url <${at}-http-address> --data-dir ${DATA_DIR}`;
}

/** removeNodeConflict says what a 409 from removing a node means (the shard's last); the server's message says what to do. */
export function removeNodeConflict(message: string): string {
  return `Not removed: ${message}`;
}
