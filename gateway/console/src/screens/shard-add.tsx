// Adding a self-hosted shard: its name, how many nodes, how long the token
// may be used; then the token, shown this once with the commands that join
// the nodes. The token lives only in this dialog: closing it forgets it.
import { useState } from "preact/hooks";
import { errorField, post } from "../api";
import { Dialog, ErrorBox, Field, Time, useAsync, val } from "../components/ui";
import { FormFooter, Options } from "../components/forms";
import { copyText } from "../components/json";
import {
  CA_FILE,
  CONTROL_PLACEHOLDER,
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
        <TokenShown token={minted} onDone={close} />
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

function TokenShown(props: { token: JoinToken; onDone: () => void }) {
  const t = props.token;
  const [control, setControl] = useState("");
  const [copied, setCopied] = useState("");
  const commands = joinCommands(t.token, t.nodes, control);
  const copy = (what: string, text: string) =>
    copyText(text).then(
      () => setCopied(`${what} copied to the clipboard.`),
      (e: Error) => setCopied(`Could not copy (${e.message}): select it and copy it.`),
    );
  return (
    <div id="shard-token-shown">
      <p class="shard-warning" role="alert">
        Copy the token now: <strong>it is shown once</strong> and the console does not keep it. Closing this dialog forgets it.
      </p>
      <dl class="kv shard-token-kv">
        <dt>Shard</dt>
        <dd>
          {t.name} <span class="mono">{t.shard_id}</span>
        </dd>
        <dt>Nodes</dt>
        <dd>{t.nodes}</dd>
        <dt>Token expires</dt>
        <dd>
          <Time at={t.expires_at} /> <span class="muted">({new Date(t.expires_at).toISOString()})</span>
        </dd>
      </dl>
      <Field label="Join token" for="shard-token">
        <span class="shard-copy-row">
          <input id="shard-token" class="mono" readOnly autoComplete="off" spellcheck={false} value={t.token} onFocus={(e) => e.currentTarget.select()} />
          <button type="button" id="shard-token-copy" aria-label="Copy the join token" onClick={() => copy("The token", t.token)}>
            Copy
          </button>
        </span>
      </Field>
      <Field
        label="Control plane URL (optional)"
        for="shard-control-url"
        hint={`The console does not know the control plane's address: ask your operator for it (https://…), or type it here to fill it into the commands; otherwise replace ${CONTROL_PLACEHOLDER}.`}
      >
        <input
          id="shard-control-url"
          type="url"
          autoComplete="off"
          spellcheck={false}
          placeholder="https://control.example.com:8081"
          value={control}
          onInput={(e) => setControl(val(e))}
        />
      </Field>
      <div class="shard-command-head">
        <span class="label" id="shard-command-label">
          {t.nodes === 1 ? "Run on the node" : `Run on each of the ${t.nodes} nodes`}
        </span>
        <button type="button" id="shard-command-copy" aria-label="Copy the join commands" onClick={() => copy("The commands", commands)}>
          Copy
        </button>
      </div>
      <pre id="shard-command" class="shard-command" tabIndex={0} aria-labelledby="shard-command-label">
        {commands}
      </pre>
      <p class="muted shard-command-hint">
        <code>{CA_FILE}</code> is the hosted service's CA certificate (from your operator). Each node keeps its certificate in{" "}
        <code>&lt;data-dir&gt;/selfhosted</code>: later starts need no token.
      </p>
      <p class="muted shard-copied" role="status">
        {copied}
      </p>
      <div class="dialog-footer">
        <button type="button" id="shard-token-done" class="primary" onClick={props.onDone}>
          I have copied it
        </button>
      </div>
    </div>
  );
}
