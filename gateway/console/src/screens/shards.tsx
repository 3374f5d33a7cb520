// Shards: the tenant's self-hosted shards (clusters it runs in its own
// network, holding the namespaces it places there), with adding one (a
// join token, shown once), adding nodes to one and removing one of its
// nodes, and revoking one: the tenant owner's alone, as the gateway
// enforces; other roles see the list only.
import { useState } from "preact/hooks";
import { settled, useApi } from "../hooks";
import { useSession } from "../session";
import { Badge, ErrorBox, Notice, Screen, Time } from "../components/ui";
import { NumCell, RowButton, Table } from "../components/table";
import { AddShardDialog } from "./shard-add";
import { RevokeShardDialog } from "./shard-revoke";
import { AddNodesDialog } from "./shard-nodes-add";
import { RemoveNodeDialog, type NodeOf } from "./shard-node-remove";
import { healthView, nodeHealthText, nodesText, SELF_HOSTING_URL, SHARDS_PATH, type OwnedShard, type OwnedShardList } from "./shards-lib";
import "./shards.css";

export function Shards() {
  const { session } = useSession();
  // Minting tokens and revoking shards are an owner key's alone (the
  // gateway checks the role, not only the action).
  const owner = session.role === "owner";
  const list = useApi<OwnedShardList>(SHARDS_PATH);
  const shards = list.data?.shards ?? [];
  // Columns for what the API says only when it says it.
  const anyExpiry = shards.some((s) => s.token_expires_at);
  const anyNs = shards.some((s) => s.namespaces);
  const [adding, setAdding] = useState(false);
  const [revoking, setRevoking] = useState<OwnedShard | null>(null);
  const [addingTo, setAddingTo] = useState<OwnedShard | null>(null);
  const [removing, setRemoving] = useState<NodeOf | null>(null);
  // Node ids removed here, per shard: retired, so never suggested again
  // (the API lists a shard's joined nodes only).
  const [retired, setRetired] = useState<Record<string, string[]>>({});
  const [notice, setNotice] = useState("");

  return (
    <Screen
      name="shards"
      title="Shards"
      ready={settled(list)}
      actions={
        <>
          <button type="button" id="shards-refresh" onClick={list.reload} disabled={list.loading}>
            Refresh
          </button>
          {owner && (
            <button type="button" id="shard-add" class="primary" onClick={() => setAdding(true)}>
              Add a shard
            </button>
          )}
        </>
      }
    >
      <p class="muted shards-intro">
        Self-hosted shards run in your own network and hold the namespaces you place on them. Their nodes dial out to this
        service; no inbound port is opened.{" "}
        <a href={SELF_HOSTING_URL} target="_blank" rel="noopener noreferrer">
          Self-hosting a shard
        </a>
      </p>
      <ErrorBox error={list.error} />
      <Notice id="shards-notice">{notice}</Notice>
      {list.data && shards.length === 0 && <ShardsEmpty owner={owner} />}
      {shards.length > 0 && (
        <Table
          id="shards-table"
          caption="Self-hosted shards"
          cols={[
            "Name",
            "Shard id",
            { label: "Nodes joined", num: true },
            "Connected here",
            "Health",
            "Created",
            anyExpiry && "Token expires",
            anyNs && "Namespaces",
            owner && { label: "Actions", hidden: true },
          ]}
        >
          {shards.map((sh) => (
            <ShardRow
              key={sh.id}
              sh={sh}
              owner={owner}
              onRevoke={() => setRevoking(sh)}
              onAddNodes={() => setAddingTo(sh)}
              onRemoveNode={(node) => setRemoving({ sh, node })}
              anyExpiry={anyExpiry}
              anyNs={anyNs}
            />
          ))}
        </Table>
      )}
      <AddShardDialog
        open={adding}
        onClose={() => setAdding(false)}
        onMinted={(t) => {
          setNotice(`Shard ${t.name} (${t.shard_id}) added: its nodes can join now.`);
          list.reload();
        }}
      />
      <AddNodesDialog
        shard={addingTo}
        retired={addingTo ? (retired[addingTo.id] ?? []) : []}
        onClose={() => setAddingTo(null)}
        onMinted={(sh, t) => {
          setNotice(`A token for ${t.nodes === 1 ? "1 more node" : `${t.nodes} more nodes`} of shard ${sh.name} (${sh.id}) was made: they can join now.`);
          list.reload();
        }}
      />
      <RemoveNodeDialog
        target={removing}
        onClose={() => setRemoving(null)}
        onRemoved={({ sh, node }) => {
          setRemoving(null);
          setRetired((r) => ({ ...r, [sh.id]: [...(r[sh.id] ?? []), node] }));
          setNotice(`Node ${node} removed from shard ${sh.name} (${sh.id}): its id is retired. Take it out of the shard's Raft group at a surviving node.`);
          list.reload();
        }}
      />
      <RevokeShardDialog
        shard={revoking}
        onClose={() => setRevoking(null)}
        onRevoked={(sh) => {
          setRevoking(null);
          setNotice(`Shard ${sh.name} (${sh.id}) revoked: its nodes are refused from now on.`);
          list.reload();
        }}
      />
    </Screen>
  );
}

function ShardsEmpty(props: { owner: boolean }) {
  return (
    <div class="empty shards-empty" id="shards-empty">
      <p>This tenant has no self-hosted shard.</p>
      <p>
        A self-hosted shard is a cluster of 1, 3 or 5 <code>jobbie shard</code> nodes on your own machines. {props.owner ? "You" : "The tenant's owner"}{" "}
        mints a join token here; each node joins once with it, then keeps its own certificate and serves the namespaces placed on
        it through an outbound tunnel.
      </p>
    </div>
  );
}

function ShardRow(props: {
  sh: OwnedShard;
  owner: boolean;
  onRevoke: () => void;
  onAddNodes: () => void;
  onRemoveNode: (node: string) => void;
  anyExpiry: boolean;
  anyNs: boolean;
}) {
  const { sh } = props;
  const connected = sh.connected ?? [];
  return (
    <tr data-shard={sh.id}>
      <td data-col="name">{sh.name}</td>
      <td class="mono" data-col="id">
        {sh.id}
      </td>
      <NumCell col="nodes">
        <span title={sh.nodes.length ? sh.nodes.join(", ") : "no node has joined yet"}>{nodesText(sh)}</span>
      </NumCell>
      <td data-col="connected" class="wrap">
        {sh.nodes.length === 0 ? (
          <span class="muted">no node yet</span>
        ) : (
          <ul class="shard-nodes" aria-label={`Nodes of shard ${sh.name}`}>
            {sh.nodes.map((n) =>
              connected.includes(n) ? (
                <li key={n}>
                  <Badge class="shard-connected" glyph="●" data-node={n} data-connected="true">
                    {n} connected
                  </Badge>
                  <NodeHealth sh={sh} id={n} />
                  {props.owner && <RemoveNode sh={sh} node={n} onClick={() => props.onRemoveNode(n)} />}
                </li>
              ) : (
                <li key={n}>
                  <Badge class="shard-away" glyph="○" data-node={n} data-connected="false" title="no tunnel to this gateway now (another gateway may hold it)">
                    {n} not here
                  </Badge>
                  <NodeHealth sh={sh} id={n} />
                  {props.owner && <RemoveNode sh={sh} node={n} onClick={() => props.onRemoveNode(n)} />}
                </li>
              ),
            )}
          </ul>
        )}
      </td>
      <HealthCell sh={sh} />
      <td data-col="created">
        <Time at={sh.created_at} />
      </td>
      {props.anyExpiry && (
        <td data-col="token-expires">
          <Time at={sh.token_expires_at} />
        </td>
      )}
      {props.anyNs && (
        <td data-col="namespaces" class="wrap">
          {sh.namespaces?.length ? sh.namespaces.join(", ") : <span class="muted">—</span>}
        </td>
      )}
      {props.owner && (
        <td class="row-actions">
          <RowButton name={`Add nodes to shard ${sh.name}`} data={{ "data-add-nodes": sh.id }} onClick={props.onAddNodes}>
            Add nodes
          </RowButton>{" "}
          <RowButton name={`Revoke shard ${sh.name}`} data={{ "data-revoke": sh.id }} danger onClick={props.onRevoke}>
            Revoke
          </RowButton>
        </td>
      )}
    </tr>
  );
}

/** RemoveNode is a node's Remove button (the owner's). */
function RemoveNode(props: { sh: OwnedShard; node: string; onClick: () => void }) {
  return (
    <RowButton name={`Remove node ${props.node} of shard ${props.sh.name}`} class="link shard-node-remove" data={{ "data-remove-node": props.node }} onClick={props.onClick}>
      Remove
    </RowButton>
  );
}

/** HealthCell is the shard's cluster health: a state with its glyph and the leader, or "unknown" when no node answered. */
function HealthCell(props: { sh: OwnedShard }) {
  const v = healthView(props.sh.health);
  return (
    <td data-col="health" data-health={v.state} class="wrap">
      <Badge class={"shard-health-" + v.state} glyph={v.glyph} title={v.title}>
        {v.text}
      </Badge>
      {v.leader && (
        <span class="shard-leader" data-leader={props.sh.health?.leader_id ?? ""}>
          {" "}
          {v.leader}
        </span>
      )}
    </td>
  );
}

/** NodeHealth is one node's role and status, as the shard's health reports it (nothing when it does not). */
function NodeHealth(props: { sh: OwnedShard; id: string }) {
  const t = nodeHealthText(props.sh.health, props.id);
  if (!t) return null;
  const down = props.sh.health?.nodes?.find((x) => x.id === props.id)?.status !== "healthy";
  return (
    <span class={down ? "shard-node-health shard-node-down" : "shard-node-health"} data-node-health={props.id}>
      {" "}
      ({t})
    </span>
  );
}
