// A minted join token, shown this once with the commands that join nodes
// with it: for a new shard, and for more nodes of an existing one. The
// token lives only in the dialog showing it: closing it forgets it.
import { useState } from "preact/hooks";
import { Field, Time, val } from "../components/ui";
import { copyText } from "../components/json";
import { CA_FILE, CONTROL_PLACEHOLDER, type JoinToken } from "./shards-lib";

type Props = {
  token: JoinToken;
  /** what the commands are for: "Run on the node", "Run on each of the 3 nodes" */
  commandLabel: string;
  /** the commands, with the control URL and (when asked for) a member's gossip address typed so far */
  commands: (controlUrl: string, gossipAddr: string) => string;
  /** ask for a member's gossip address to fill into the commands (nodes joining a running shard) */
  askGossip?: boolean;
  onDone: () => void;
};

export function TokenShown(props: Props) {
  const t = props.token;
  const [control, setControl] = useState("");
  const [gossip, setGossip] = useState("");
  const [copied, setCopied] = useState("");
  const commands = props.commands(control, gossip);
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
      <div class="shard-form-grid">
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
        {props.askGossip && (
          <Field label="A member's gossip address (optional)" for="shard-gossip-addr" hint="The --gossip address of a running node of the shard, host:port.">
            <input
              id="shard-gossip-addr"
              autoComplete="off"
              spellcheck={false}
              placeholder="10.0.0.7:7301"
              value={gossip}
              onInput={(e) => setGossip(val(e))}
            />
          </Field>
        )}
      </div>
      <div class="shard-command-head">
        <span class="label" id="shard-command-label">
          {props.commandLabel}
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
