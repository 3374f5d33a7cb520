// Adding a self-hosted shard: its name, how many nodes, how long the token
// may be used; then the token, shown this once with the commands that join
// the nodes (shard-token.tsx).
import { useState } from "preact/hooks";
import { errorField, post } from "../api";
import { Dialog, ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, Options } from "../components/forms";
import { TokenShown } from "./shard-token";
import {
  DEFAULT_EXPIRY,
  EXPIRIES,
  JOIN_TOKENS_PATH,
  joinCommands,
  MAX_NAME,
  NODE_COUNTS,
  shardNameError,
  type JoinToken,
} from "./shards-lib";

type Props = { open: boolean; onClose: () => void; onMinted: (t: JoinToken) => void };

export function AddShardDialog(props: Props) {
  const [minted, setMinted] = useState<JoinToken | null>(null);
  const close = () => {
    setMinted(null); // the token is gone with the dialog
    props.onClose();
  };
  return (
    <Dialog open={props.open} id="shard-add-dialog" title={minted ? `Shard ${minted.name} added` : "Add a shard"} onClose={close} wide={!!minted}>
      {minted ? (
        <TokenShown
          token={minted}
          commandLabel={minted.nodes === 1 ? "Run on the node" : `Run on each of the ${minted.nodes} nodes`}
          commands={(control) => joinCommands(minted.token, minted.nodes, control)}
          onDone={close}
        />
      ) : (
        <AddForm
          onCancel={close}
          onMinted={(t) => {
            setMinted(t);
            props.onMinted(t);
          }}
        />
      )}
    </Dialog>
  );
}

function AddForm(props: { onCancel: () => void; onMinted: (t: JoinToken) => void }) {
  const [name, setName] = useState("");
  const [nodes, setNodes] = useState("1");
  const [expires, setExpires] = useState(DEFAULT_EXPIRY);
  const [touched, setTouched] = useState(false);
  const { busy, error, run } = useAsync();
  const nameErr = touched ? shardNameError(name) : "";
  const serverField = errorField(error);

  const submit = async (e: Event) => {
    e.preventDefault();
    setTouched(true);
    if (shardNameError(name)) return;
    await run(async () => {
      props.onMinted(await post<JoinToken>(JOIN_TOKENS_PATH, { name: name.trim(), nodes: Number(nodes), expires_in: expires }));
    });
  };

  return (
    <form id="shard-add-form" onSubmit={submit} noValidate>
      <p class="muted">
        A join token admits the nodes of one new shard, each once. It is shown once, when it is made.
      </p>
      <Field label="Name" for="shard-name" hint="Yours to choose, e.g. the data centre it runs in.">
        <input
          id="shard-name"
          required
          autoComplete="off"
          spellcheck={false}
          maxLength={MAX_NAME}
          value={name}
          aria-invalid={nameErr || serverField === "name" ? true : undefined}
          aria-describedby={nameErr ? "shard-name-error" : undefined}
          onInput={(e) => setName(val(e))}
          onBlur={() => setTouched(true)}
        />
      </Field>
      {nameErr && (
        <p id="shard-name-error" class="field-error">
          {nameErr}
        </p>
      )}
      <div class="shard-form-grid">
        <Field label="Nodes" for="shard-nodes" hint="The cluster's size: one Raft group.">
          <select id="shard-nodes" value={nodes} onChange={(e) => setNodes(val(e))} aria-invalid={serverField === "nodes" ? true : undefined}>
            <Options choices={NODE_COUNTS.map((n) => ({ value: String(n), label: n === 1 ? "1 node" : `${n} nodes` }))} />
          </select>
        </Field>
        <Field label="Token expires in" for="shard-expires" hint="Nodes must join before then.">
          <select id="shard-expires" value={expires} onChange={(e) => setExpires(val(e))} aria-invalid={serverField === "expires_in" ? true : undefined}>
            <Options choices={EXPIRIES} />
          </select>
        </Field>
      </div>
      <ErrorBox id="shard-add-error" error={error} />
      <FormFooter id="shard-add-ok" busy={busy} onCancel={props.onCancel} label={busy ? "Making the token…" : "Make the join token"} />
    </form>
  );
}
