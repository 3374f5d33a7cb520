// A new secret, shown once: a read-only field with a Copy button. The
// secret lives only in the dialog that shows it; closing that forgets it.
import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";
import { Field } from "../components/ui";

/** copyText writes text to the clipboard, falling back to the selection for browsers without the Clipboard API. */
async function copyText(text: string, input: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (!input) return false;
    input.select();
    try {
      return document.execCommand("copy");
    } catch {
      return false;
    }
  }
}

/** SecretShown is a key dialog's last step: what happened (intro), the secret with its Copy button, details (children), and "I have copied it", which closes the dialog. */
export function SecretShown(props: { intro: ComponentChildren; secret: string; onDone: () => void; children?: ComponentChildren }) {
  return (
    <>
      <p>{props.intro}</p>
      <KeySecret secret={props.secret}>{props.children}</KeySecret>
      <div class="dialog-footer">
        <button type="button" id="key-done" class="primary" onClick={props.onDone}>
          I have copied it
        </button>
      </div>
    </>
  );
}

function KeySecret(props: { secret: string; children?: ComponentChildren }) {
  const [copied, setCopied] = useState<"" | "ok" | "failed">("");
  const input = useRef<HTMLInputElement>(null);
  return (
    <div class="key-secret-box">
      <p class="key-warning" role="alert">
        Copy this secret now and keep it somewhere safe: <strong>it will not be shown again</strong>. The console does not keep it.
      </p>
      <Field label="Secret" for="key-secret">
        <span class="key-secret-row">
          <input
            id="key-secret"
            class="mono"
            readOnly
            autoComplete="off"
            spellcheck={false}
            value={props.secret}
            ref={input}
            onFocus={(e) => e.currentTarget.select()}
          />
          <button
            type="button"
            id="key-copy"
            onClick={async () => setCopied((await copyText(props.secret, input.current)) ? "ok" : "failed")}
          >
            Copy
          </button>
        </span>
      </Field>
      <p class="muted key-copied" role="status">
        {copied === "ok" ? "Copied to the clipboard." : copied === "failed" ? "Could not copy: select the secret and copy it." : ""}
      </p>
      {props.children}
    </div>
  );
}
