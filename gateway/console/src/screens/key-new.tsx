// The new-key dialog: name, description, role (built-in roles this key may
// grant and the tenant's custom roles), namespaces (some, or every one),
// the default namespace and an expiry; then the secret, shown once.
import { useEffect, useMemo, useState } from "preact/hooks";
import { post } from "../api";
import { useApi } from "../hooks";
import { useSession } from "../session";
import { Dialog, ErrorBox, Field, KV, useAsync, val } from "../components/ui";
import { FormFooter, Options } from "../components/forms";
import { SecretShown } from "./key-secret";
import { EXPIRY_PRESETS, expiresAt, keyNamespaces, withoutSecret, type CreatedKey, type Key } from "./key-util";
import type { NamespaceList } from "./namespace-util";
import { BUILTIN_DESCRIPTIONS, BUILTIN_ROLES, builtinActions, describePermission, mayGrantRole, type Role, type RoleList } from "./role-util";

type Props = { open: boolean; onClose: () => void; onCreated: (k: Key) => void };

export function KeyNew(props: Props) {
  // The form holds the secret once created: a closed dialog renders no body, so closing
  // unmounts the form, and the secret with it.
  return (
    <Dialog open={props.open} id="key-new-dialog" title="New API key" onClose={props.onClose} wide>
      <KeyForm {...props} />
    </Dialog>
  );
}

function KeyForm(props: Props) {
  const { session, namespace, can } = useSession();
  // A key that may not read the namespaces falls back to what the session knows.
  const roles = useApi<RoleList>("/api/v1/roles");
  const nsList = useApi<NamespaceList>(can("namespace.read") ? "/api/v1/namespaces" : null);
  const mayAll = session.namespaces.includes("*");

  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [role, setRole] = useState("viewer");
  const [all, setAll] = useState(false);
  const [chosen, setChosen] = useState<string[]>([namespace]);
  const [dflt, setDflt] = useState(namespace);
  const [expiry, setExpiry] = useState("never");
  const [customExpiry, setCustomExpiry] = useState("");
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const { busy, error, run } = useAsync();

  // Without the roles list (a key that may not read it), the built-in
  // roles are still known.
  const roleChoices: Role[] = useMemo(() => {
    const list =
      roles.data?.roles ??
      (roles.error ? BUILTIN_ROLES.map((name) => ({ name, description: BUILTIN_DESCRIPTIONS[name], permissions: [], builtin: true })) : []);
    return list.filter((r) => mayGrantRole(session.role, r.name));
  }, [roles.data, roles.error, session.role]);
  const rolesKnown = roleChoices.length > 0;

  const namespaceChoices = useMemo(() => {
    const known = nsList.data ? nsList.data.namespaces.map((n) => n.name) : session.namespaces.filter((n) => n !== "*");
    const out = mayAll ? known : known.filter((n) => session.namespaces.includes(n));
    return out.includes(namespace) ? out : [namespace, ...out];
  }, [nsList.data, session.namespaces, namespace]);

  const selectedRole = roleChoices.find((r) => r.name === role);
  useEffect(() => {
    if (roleChoices.length && !selectedRole) setRole(roleChoices.find((r) => r.name === "viewer")?.name ?? roleChoices[roleChoices.length - 1].name);
  }, [roleChoices]);

  const close = props.onClose;

  const toggle = (ns: string, on: boolean) => {
    const next = on ? [...chosen, ns] : chosen.filter((n) => n !== ns);
    setChosen(next);
    if (!next.includes(dflt)) setDflt(next[0] ?? "");
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    await run(async () => {
      if (!all && chosen.length === 0) throw new Error("Choose at least one namespace.");
      const body = {
        name: name.trim(),
        description: description.trim() || undefined,
        role,
        namespaces: keyNamespaces(all, chosen, dflt),
        expires_at: expiresAt(expiry, customExpiry) ?? undefined,
      };
      const k = await post<CreatedKey>("/api/v1/keys", body);
      setCreated(k);
      props.onCreated(withoutSecret(k));
    });
  };

  if (created) {
    return (
      <SecretShown
        intro={
          <>
            Key <strong>{created.name}</strong> created.
          </>
        }
        secret={created.key}
        onDone={close}
      >
        <dl class="kv">
          <KV k="ID" class="mono">
            {created.id}
          </KV>
          <KV k="Role">{created.role}</KV>
          <KV k="Namespaces">{created.namespaces.join(", ")}</KV>
          <KV k="Expires">{created.expires_at ? new Date(created.expires_at).toLocaleString() : "never"}</KV>
        </dl>
      </SecretShown>
    );
  }

  return (
    <form id="key-form" onSubmit={submit}>
      <div class="key-form-grid">
        <Field label="Name" for="key-name" hint="Letters, digits, spaces, '.', '_', ':' or '-' (up to 64).">
          <input id="key-name" required maxLength={64} autoComplete="off" value={name} onInput={(e) => setName(val(e))} />
        </Field>
        <Field label="Role" for="key-role">
          <select id="key-role" value={role} onChange={(e) => setRole(val(e))} disabled={!rolesKnown}>
            {!rolesKnown && <option value={role}>{roles.error ? "no role this key may grant" : "Loading…"}</option>}
            <Options choices={roleChoices.map((r) => ({ value: r.name, label: r.name + (r.builtin ? "" : " (custom)") }))} />
          </select>
        </Field>
      </div>
      {selectedRole && (
        <p class="muted key-role-hint" id="key-role-hint">
          {selectedRole.description || BUILTIN_DESCRIPTIONS[selectedRole.name] || ""}
          {" — "}
          {selectedRole.builtin ? builtinActions(selectedRole.name).join(", ") : selectedRole.permissions.map(describePermission).join("; ")}
        </p>
      )}
      {roles.error && <p class="muted">The tenant's custom roles could not be listed ({roles.error.message}); built-in roles only.</p>}
      <Field label="Description" for="key-description">
        <input id="key-description" maxLength={1024} autoComplete="off" value={description} onInput={(e) => setDescription(val(e))} />
      </Field>
      <fieldset class="key-namespaces">
        <legend>Namespaces</legend>
        {mayAll && (
          <label class="check">
            <input id="key-ns-all" type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} />
            Every namespace, present and future (its default namespace is "default")
          </label>
        )}
        {!all && (
          <div class="key-ns-list">
            {namespaceChoices.map((ns) => (
              <label class="check" key={ns}>
                <input type="checkbox" data-ns={ns} checked={chosen.includes(ns)} onChange={(e) => toggle(ns, e.currentTarget.checked)} />
                <span class="mono">{ns}</span>
              </label>
            ))}
          </div>
        )}
        {!all && chosen.length > 1 && (
          <Field label="Default namespace" for="key-default-ns" hint="Where the key works when a request names no namespace.">
            <select id="key-default-ns" value={dflt} onChange={(e) => setDflt(val(e))}>
              <Options choices={chosen} />
            </select>
          </Field>
        )}
      </fieldset>
      <div class="key-form-grid">
        <Field label="Expires" for="key-expiry">
          <select id="key-expiry" value={expiry} onChange={(e) => setExpiry(val(e))}>
            <Options choices={EXPIRY_PRESETS} />
          </select>
        </Field>
        {expiry === "custom" && (
          <Field label="Expires at (your time zone)" for="key-expires-at">
            <input id="key-expires-at" type="datetime-local" required value={customExpiry} onInput={(e) => setCustomExpiry(val(e))} />
          </Field>
        )}
      </div>
      <ErrorBox error={error} />
      <FormFooter id="key-create" busy={busy} disabled={!rolesKnown} onCancel={close} label={busy ? "Creating…" : "Create key"} />
    </form>
  );
}
