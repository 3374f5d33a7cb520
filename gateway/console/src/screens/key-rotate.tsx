// Rotating a key: a new secret, shown once, while the old one keeps
// working for the grace period chosen (wire.MaxGracePeriod at most).
import { useState } from "preact/hooks";
import { enc, post } from "../api";
import { Dialog, ErrorBox, Field, useAsync, val } from "../components/ui";
import { KeySecret } from "./key-secret";
import { GRACE_PRESETS, type Key, type RotatedKey } from "./key-util";

type Props = { target: Key | null; own: boolean; onClose: () => void; onRotated: (k: Key) => void };

export function KeyRotate(props: Props) {
  const k = props.target;
  // The form mounts with each opening and holds the new secret: closing
  // the dialog unmounts it, and the secret with it.
  return (
    <Dialog open={k !== null} id="key-rotate-dialog" title={`Rotate key ${k?.name ?? ""}`} onClose={props.onClose}>
      {k && <RotateForm {...props} k={k} />}
    </Dialog>
  );
}

function RotateForm(props: Props & { k: Key }) {
  const k = props.k;
  // A short grace by default for the session's own key, so the console is not cut off mid-rotation.
  const [grace, setGrace] = useState(props.own ? "5m" : "0s");
  const [rotated, setRotated] = useState<RotatedKey | null>(null);
  const { busy, error, run } = useAsync();
  const close = props.onClose;

  if (rotated) {
    const until = new Date(rotated.previous_key_valid_until);
    const now = Date.now();
    return (
      <>
        <p>
          Key <strong>{rotated.name}</strong> has a new secret.
        </p>
        <KeySecret secret={rotated.key}>
          <p id="key-grace-until">
            {until.getTime() > now + 1000
              ? `The old secret keeps working until ${until.toLocaleString()}; then only this one does.`
              : "The old secret stopped working now."}
          </p>
        </KeySecret>
        <div class="dialog-footer">
          <button type="button" id="key-done" class="primary" onClick={close}>
            I have copied it
          </button>
        </div>
      </>
    );
  }

  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        await run(async () => {
          const r = await post<RotatedKey>(`/api/v1/keys/${enc(k.id)}/rotate`, { grace_period: grace });
          setRotated(r);
          const { key: _secret, ...rest } = r;
          props.onRotated(rest);
        });
      }}
    >
      <p>
        A rotation gives <strong>{k.name}</strong> (<span class="mono">{k.id}</span>) a new secret with the same role and namespaces.
      </p>
      <Field label="Grace period for the old secret" for="key-grace">
        <select id="key-grace" value={grace} onChange={(e) => setGrace(val(e))}>
          {GRACE_PRESETS.map((g) => (
            <option key={g.value} value={g.value}>
              {g.label}
            </option>
          ))}
        </select>
      </Field>
      {props.own && (
        <p class="error" role="alert">
          This is the key this console session signed in with: the console signs out when the old secret stops working.
        </p>
      )}
      <ErrorBox error={error} />
      <div class="dialog-footer">
        <button type="button" onClick={close} disabled={busy}>
          Cancel
        </button>
        <button type="submit" id="key-rotate-ok" class="primary" disabled={busy}>
          {busy ? "Rotating…" : "Rotate"}
        </button>
      </div>
    </form>
  );
}
