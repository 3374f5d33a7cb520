// Adding nodes to a self-hosted shard (to grow it, or to replace a removed
// node): how many, how long the token may be used, and the new nodes' ids,
// which must be ids the shard never had; then the token, shown this once
// with the commands that join those nodes to the running group.
import { useState } from "preact/hooks";
import { ApiError, errorField, post } from "../api";
import { ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, ItemDialog, Options } from "../components/forms";
import { TokenShown } from "./shard-token";
import {
  addableNodes,
  addNodeCommands,
  addNodesConflict,
  DEFAULT_EXPIRY,
  EXPIRIES,
  MAX_SHARD_NODES,
  nodeIdsError,
  nodeTokensPath,
  parseNodeIds,
  suggestNodeIds,
  type JoinToken,
  type OwnedShard,
} from "./shards-lib";

type Props = {
  shard: OwnedShard | null;
  /** ids of the shard's nodes removed here: retired, so not suggested again */
  retired: readonly string[];
  onClose: () => void;
  onMinted: (sh: OwnedShard, t: JoinToken) => void;
};

export function AddNodesDialog(props: Props) {
  // The token and the ids it was minted for live only while the dialog is open.
  const [minted, setMinted] = useState<{ token: JoinToken; ids: string[] } | null>(null);
  const close = () => {
    setMinted(null);
    props.onClose();
  };
  const name = props.shard?.name ?? "";
  return (
    <ItemDialog item={props.shard} id="shard-nodes-dialog" title={minted ? `More nodes for shard ${name}` : `Add nodes to shard ${name}`} onClose={close} wide={!!minted}>
      {(sh) =>
        minted ? (
          <TokenShown
            token={minted.token}
            commandLabel={minted.ids.length === 1 ? `Run on the new node ${minted.ids[0]}` : `Run on each of the ${minted.ids.length} new nodes`}
            commands={(control, gossip) => addNodeCommands(minted.token.token, minted.ids, sh.nodes, gossip, control)}
            askGossip
            onDone={close}
          />
        ) : (
          <AddNodesForm
            sh={sh}
            retired={props.retired}
            onCancel={close}
            onMinted={(token, ids) => {
              setMinted({ token, ids });
              props.onMinted(sh, token);
            }}
          />
        )
      }
    </ItemDialog>
  );
}

function AddNodesForm(props: { sh: OwnedShard; retired: readonly string[]; onCancel: () => void; onMinted: (t: JoinToken, ids: string[]) => void }) {
  const { sh } = props;
  const max = addableNodes(sh);
  const taken = [...sh.nodes, ...(sh.retired ?? []), ...props.retired];
  const [nodes, setNodes] = useState(1);
  const [expires, setExpires] = useState(DEFAULT_EXPIRY);
  // null: the suggestion for the count chosen; typed ids once edited.
  const [typed, setTyped] = useState<string | null>(null);
  const ids = typed === null ? suggestNodeIds(taken, nodes) : parseNodeIds(typed);
  const idsErr = nodeIdsError(ids, nodes, taken);
  const { busy, error, run } = useAsync();
  const serverField = errorField(error);
  const conflict = error instanceof ApiError && error.status === 409;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (idsErr || max === 0) return;
    await run(async () => {
      props.onMinted(await post<JoinToken>(nodeTokensPath(sh.id), { nodes, expires_in: expires }), ids);
    });
  };

  return (
    <form id="shard-nodes-form" onSubmit={submit} noValidate>
      <p class="muted">
        A token that joins more nodes to <strong>{sh.name}</strong> (<span class="mono">{sh.id}</span>), to grow it or to replace a removed
        node. The new nodes join the running group under ids the shard never had. The token is shown once, when it is made.
      </p>
      <p class="shard-node-list">
        Joined now: {sh.nodes.length ? <span class="mono">{sh.nodes.join(", ")}</span> : <span class="muted">none</span>}
        {sh.expected_nodes ? <> (of {sh.expected_nodes} expected)</> : null}
      </p>
      {max === 0 ? (
        <p class="error" id="shard-nodes-full" role="alert">
          The shard has {sh.nodes.length} nodes, the most it may have ({MAX_SHARD_NODES}): remove a node first.
        </p>
      ) : (
        <>
          <div class="shard-form-grid">
            <Field label="New nodes" for="shard-nodes-count" hint={`At most ${max} now (${MAX_SHARD_NODES} nodes in all).`}>
              <select
                id="shard-nodes-count"
                value={String(nodes)}
                onChange={(e) => {
                  setNodes(Number(val(e)));
                  setTyped(null); // the suggestion for the new count
                }}
                aria-invalid={serverField === "nodes" ? true : undefined}
              >
                <Options choices={Array.from({ length: max }, (_, i) => ({ value: String(i + 1), label: i === 0 ? "1 node" : `${i + 1} nodes` }))} />
              </select>
            </Field>
            <Field label="Token expires in" for="shard-nodes-expires" hint="The nodes must join before then.">
              <select
                id="shard-nodes-expires"
                value={expires}
                onChange={(e) => setExpires(val(e))}
                aria-invalid={serverField === "expires_in" ? true : undefined}
              >
                <Options choices={EXPIRIES} />
              </select>
            </Field>
          </div>
          <Field
            label="New node ids"
            for="shard-nodes-ids"
            hintId="shard-nodes-ids-hint"
            hint="For the commands. A removed node's id is retired: a node joining under it, or under a member's, is refused."
          >
            <input
              id="shard-nodes-ids"
              class="mono"
              autoComplete="off"
              spellcheck={false}
              value={typed ?? ids.join(" ")}
              aria-invalid={idsErr ? true : undefined}
              aria-describedby={idsErr ? "shard-nodes-ids-hint shard-nodes-ids-error" : "shard-nodes-ids-hint"}
              onInput={(e) => setTyped(val(e))}
            />
          </Field>
          {idsErr && (
            <p id="shard-nodes-ids-error" class="field-error">
              {idsErr}
            </p>
          )}
        </>
      )}
      {conflict ? (
        <ErrorBox id="shard-nodes-conflict" error={addNodesConflict(error?.message ?? "")} />
      ) : (
        <ErrorBox id="shard-nodes-error" error={error} />
      )}
      <FormFooter
        id="shard-nodes-ok"
        busy={busy}
        disabled={max === 0 || !!idsErr}
        onCancel={props.onCancel}
        label={busy ? "Making the token…" : "Make the join token"}
      />
    </form>
  );
}
