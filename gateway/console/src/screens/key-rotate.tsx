// Rotating a key: a new secret, shown once, while the old one keeps
// working for the grace period chosen (wire.MaxGracePeriod at most).
import { useState } from "preact/hooks";
import { enc, post } from "../api";
import { ErrorBox, Field, useAsync, val } from "../components/ui";
import { FormFooter, ItemDialog, Options } from "../components/forms";
import { SecretShown } from "./key-secret";
import { GRACE_PRESETS, withoutSecret, type Key, type RotatedKey } from "./key-util";

type Props = { target: Key | null; own: boolean; onClose: () => void; onRotated: (k: Key) => void };

export function KeyRotate(props: Props) {
  // The form holds the new secret: closing the dialog unmounts it, and the secret with it.
  return (
    <ItemDialog item={props.target} id="key-rotate-dialog" title={`Rotate key ${props.target?.name ?? ""}`} onClose={props.onClose}>
      {(k) => <RotateForm {...props} k={k} />}
    </ItemDialog>
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
      <SecretShown
        intro={
          <>
            Key <strong>{rotated.name}</strong> has a new secret.
          </>
        }
        secret={rotated.key}
        onDone={close}
      >
        <p id="key-grace-until">
          {until.getTime() > now + 1000 ? `The old secret keeps working until ${until.toLocaleString()}; then only this one does.` : "The old secret stopped working now."}
        </p>
      </SecretShown>
    );
  }

  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        await run(async () => {
          const r = await post<RotatedKey>(`/api/v1/keys/${enc(k.id)}/rotate`, { grace_period: grace });
          setRotated(r);
          props.onRotated(withoutSecret(r));
        });
      }}
    >
      <p>
        A rotation gives <strong>{k.name}</strong> (<span class="mono">{k.id}</span>) a new secret with the same role and namespaces.
      </p>
      <Field label="Grace period for the old secret" for="key-grace">
        <select id="key-grace" value={grace} onChange={(e) => setGrace(val(e))}>
          <Options choices={GRACE_PRESETS} />
        </select>
      </Field>
      {props.own && (
        <p class="error" role="alert">
          This is the key this console session signed in with: the console signs out when the old secret stops working.
        </p>
      )}
      <ErrorBox error={error} />
      <FormFooter id="key-rotate-ok" busy={busy} onCancel={close} label={busy ? "Rotating…" : "Rotate"} />
    </form>
  );
}
