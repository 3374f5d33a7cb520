// The current namespace's OTLP endpoint: the OpenTelemetry collector the
// spans of its jobs are sent to (GET and PUT /api/v1/tracing, which work
// on the request's namespace). A role with namespace.manage sets or
// removes it; the server judges the URL and its 400 (otlp_endpoint)
// marks the field. Others see it read-only.
import { useState } from "preact/hooks";
import { errorField, put } from "../api";
import { useApi } from "../hooks";
import { ErrorBox, Notice, useAsync, val } from "../components/ui";
import { errorText } from "./queue-lib";

interface NamespaceTracing {
  otlp_endpoint: string;
}

const TRACING = "/api/v1/tracing";

/** Keyed by the namespace where it is used: switching starts it again with the new one's. */
export function TracingCard(props: { namespace: string; manage: boolean }) {
  const res = useApi<NamespaceTracing>(TRACING);
  const endpoint = res.data?.otlp_endpoint;
  const [notice, setNotice] = useState("");
  return (
    <section class="card ns-tracing" id="tracing" aria-labelledby="tracing-title" data-loaded={res.data ? "true" : "false"}>
      <h2 id="tracing-title">OTLP endpoint</h2>
      <p class="muted">
        The OpenTelemetry collector that receives the spans of the jobs of namespace <strong class="mono">{props.namespace}</strong>, as
        OTLP/HTTP: its traces URL, https, on a public address and on the egress allow-list when there is one.
      </p>
      <ErrorBox error={res.error} />
      {res.data && !props.manage && (
        <p id="tracing-current">{endpoint ? <span class="mono">{endpoint}</span> : "None: the namespace's spans are sent nowhere."}</p>
      )}
      {res.data && props.manage && (
        <TracingEditor
          key={endpoint}
          endpoint={endpoint ?? ""}
          onSaving={() => setNotice("")}
          onSaved={(msg) => {
            setNotice(msg);
            res.reload();
          }}
        />
      )}
      <Notice id="tracing-notice">{notice}</Notice>
    </section>
  );
}

function TracingEditor(props: { endpoint: string; onSaving: () => void; onSaved: (notice: string) => void }) {
  const [url, setUrl] = useState(props.endpoint);
  const { busy, error, run } = useAsync();
  const bad = !!error && errorField(error) === "otlp_endpoint";
  const save = (endpoint: string) => {
    props.onSaving();
    run(async () => {
      const held = await put<NamespaceTracing>(TRACING, { otlp_endpoint: endpoint || null });
      props.onSaved(held.otlp_endpoint ? `OTLP endpoint saved: ${held.otlp_endpoint}.` : "OTLP endpoint removed: spans are sent nowhere.");
    });
  };
  return (
    <form
      id="tracing-form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        save(url.trim());
      }}
    >
      {!props.endpoint && (
        <p class="muted" id="tracing-none">
          None yet: the namespace's spans are sent nowhere.
        </p>
      )}
      <label for="tracing-url">Traces URL</label>
      <input
        id="tracing-url"
        class="mono"
        type="url"
        autoComplete="off"
        spellcheck={false}
        placeholder="https://otel.example.com/v1/traces"
        value={url}
        aria-invalid={bad ? true : undefined}
        aria-describedby={bad ? "tracing-url-error" : undefined}
        onInput={(e) => setUrl(val(e))}
      />
      {bad && (
        <p id="tracing-url-error" class="field-error">
          {error?.message}
        </p>
      )}
      {!bad && <ErrorBox id="tracing-error" error={error ? errorText(error) : null} />}
      <div class="egress-buttons">
        <button type="submit" id="tracing-save" class="primary" disabled={busy}>
          {busy ? "Saving…" : "Save endpoint"}
        </button>
        {props.endpoint && (
          <button type="button" id="tracing-clear" disabled={busy} onClick={() => save("")}>
            Remove
          </button>
        )}
      </div>
    </form>
  );
}
