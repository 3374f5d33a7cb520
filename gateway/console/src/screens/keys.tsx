// API keys: the tenant's keys within this key's namespaces; create one
// (its secret shown once), rotate and revoke (key.manage). The key this
// session signed in with is marked, and revoking it signs the console out.
import { useMemo, useState } from "preact/hooks";
import { del, enc } from "../api";
import { settled, useApi } from "../hooks";
import { useSession } from "../session";
import { Confirm, Empty, ErrorBox, Screen, Time } from "../components/ui";
import { KeyNew } from "./key-new";
import { KeyRotate } from "./key-rotate";
import { keyStatus, type Key, type KeyList } from "./key-util";
import "./namespaces.css";
import "./keys.css";

export function Keys() {
  const { can, session, signOut } = useSession();
  const list = useApi<KeyList>("/api/v1/keys");
  const [creating, setCreating] = useState(false);
  const [rotating, setRotating] = useState<Key | null>(null);
  const [revoking, setRevoking] = useState<Key | null>(null);
  const [showRevoked, setShowRevoked] = useState(false);
  const [filter, setFilter] = useState("");
  const [notice, setNotice] = useState("");
  const manage = can("key.manage");

  const all = list.data?.keys ?? [];
  const revokedCount = all.filter((k) => k.revoked_at).length;
  const keys = useMemo(() => {
    const f = filter.trim().toLowerCase();
    return all
      .filter((k) => showRevoked || !k.revoked_at)
      .filter((k) => !f || [k.name, k.description, k.id, k.role, ...k.namespaces].some((s) => s?.toLowerCase().includes(f)))
      .sort((a, b) => b.created_at.localeCompare(a.created_at));
  }, [all, showRevoked, filter]);
  const own = revoking?.id === session.key_id;

  return (
    <Screen
      name="keys"
      title="API keys"
      ready={settled(list)}
      actions={
        manage && (
          <button type="button" id="key-new" class="primary" onClick={() => setCreating(true)}>
            New API key
          </button>
        )
      }
    >
      <ErrorBox error={list.error} />
      {notice && (
        <div class="notice" role="status">
          {notice}
        </div>
      )}
      <div class="toolbar">
        <label class="field keys-filter">
          <span class="sr-only">Filter keys</span>
          <input id="key-filter" type="search" placeholder="Filter by name, id, role or namespace" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input id="key-show-revoked" type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.currentTarget.checked)} />
          Show revoked ({revokedCount})
        </label>
      </div>
      {list.data && keys.length === 0 && <Empty>{all.length === 0 ? "No API keys in this key's namespaces." : "No key matches."}</Empty>}
      {keys.length > 0 && (
        <div class="table-wrap">
          <table class="data keys-table">
            <caption class="sr-only">API keys</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">ID</th>
                <th scope="col">Role</th>
                <th scope="col">Namespaces</th>
                <th scope="col">Created</th>
                <th scope="col">Expires</th>
                <th scope="col" title="As gateways report it, up to about a minute late">
                  Last used
                </th>
                <th scope="col">Status</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => {
                const status = keyStatus(k);
                return (
                  <tr key={k.id} data-key={k.id} class={status !== "active" ? "key-inactive" : undefined}>
                    <td class="wrap key-name">
                      <span>{k.name}</span>
                      {k.id === session.key_id && <span class="badge key-own">this session</span>}
                      {k.description && <span class="muted key-desc">{k.description}</span>}
                    </td>
                    <td class="mono">{k.id}</td>
                    <td>{k.role}</td>
                    <td class="wrap">{k.namespaces.includes("*") ? <span title="every namespace">* (all)</span> : k.namespaces.join(", ")}</td>
                    <td>
                      <Time at={k.created_at} />
                      {k.rotated_at && (
                        <span class="muted key-rotated">
                          {" "}
                          · rotated <Time at={k.rotated_at} />
                        </span>
                      )}
                    </td>
                    <td>{k.expires_at ? <Time at={k.expires_at} /> : <span class="muted">never</span>}</td>
                    <td>{k.last_used_at ? <Time at={k.last_used_at} /> : <span class="muted">never</span>}</td>
                    <td>
                      <span class={"badge key-" + status}>
                        {status === "revoked" ? (
                          <>
                            revoked <Time at={k.revoked_at} />
                          </>
                        ) : (
                          status
                        )}
                      </span>
                    </td>
                    <td class="row-actions">
                      {manage && status !== "revoked" && (
                        <button type="button" data-rotate={k.id} onClick={() => setRotating(k)} aria-label={`Rotate key ${k.name}`}>
                          Rotate
                        </button>
                      )}
                      {manage && status !== "revoked" && (
                        <button type="button" class="danger" data-revoke={k.id} onClick={() => setRevoking(k)} aria-label={`Revoke key ${k.name}`}>
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <KeyNew
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(k) => {
          setNotice(`Key ${k.name} (${k.id}) created.`);
          list.reload();
        }}
      />
      <KeyRotate
        target={rotating}
        own={rotating?.id === session.key_id}
        onClose={() => setRotating(null)}
        onRotated={(k) => {
          setNotice(`Key ${k.name} rotated.`);
          list.reload();
        }}
      />
      <Confirm
        open={revoking !== null}
        title={`Revoke key ${revoking?.name ?? ""}`}
        confirmLabel={own ? "Revoke and sign out" : "Revoke"}
        danger
        onClose={() => setRevoking(null)}
        onConfirm={async () => {
          if (!revoking) return;
          await del(`/api/v1/keys/${enc(revoking.id)}`);
          if (own) {
            signOut();
            return;
          }
          setNotice(`Key ${revoking.name} revoked: gateways refuse it within a minute.`);
          list.reload();
        }}
      >
        <p>
          Revoke <strong>{revoking?.name}</strong> (<span class="mono">{revoking?.id}</span>, role {revoking?.role})? Whatever uses it stops
          working within a minute, and it cannot be brought back.
        </p>
        {own && (
          <p class="error" id="key-revoke-own" role="alert">
            This is the key this console session signed in with: revoking it signs the console out.
          </p>
        )}
      </Confirm>
    </Screen>
  );
}
