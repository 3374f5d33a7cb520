// API keys: the tenant's keys within this key's namespaces; create one
// (its secret shown once), rotate and revoke (key.manage). The key this
// session signed in with is marked, and revoking it signs the console out.
import { useMemo, useState } from "preact/hooks";
import { del, enc } from "../api";
import { settled, useApi } from "../hooks";
import { useSession } from "../session";
import { ConfirmOn, Empty, ErrorBox, Notice, Screen, Time } from "../components/ui";
import { FilterBox } from "../components/forms";
import { RowButton, Table } from "../components/table";
import { KeyNew } from "./key-new";
import { KeyRotate } from "./key-rotate";
import { contains } from "../lib/match";
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
    return all
      .filter((k) => showRevoked || !k.revoked_at)
      .filter((k) => contains(filter, k.name, k.description, k.id, k.role, ...k.namespaces))
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
      <Notice>{notice}</Notice>
      <div class="toolbar">
        <FilterBox id="key-filter" label="Filter keys" class="field keys-filter" placeholder="Filter by name, id, role or namespace" value={filter} onInput={setFilter} />
        <label class="check">
          <input id="key-show-revoked" type="checkbox" checked={showRevoked} onChange={(e) => setShowRevoked(e.currentTarget.checked)} />
          Show revoked ({revokedCount})
        </label>
      </div>
      {list.data && keys.length === 0 && <Empty>{all.length === 0 ? "No API keys in this key's namespaces." : "No key matches."}</Empty>}
      {keys.length > 0 && (
        <Table
          class="keys-table"
          caption="API keys"
          cols={[
            "Name",
            "ID",
            "Role",
            "Namespaces",
            "Created",
            "Expires",
            { label: "Last used", title: "As gateways report it, up to about a minute late" },
            "Status",
            { label: "Actions", hidden: true },
          ]}
        >
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
                    <>
                      <RowButton data={{ "data-rotate": k.id }} name={`Rotate key ${k.name}`} onClick={() => setRotating(k)}>
                        Rotate
                      </RowButton>
                      <RowButton data={{ "data-revoke": k.id }} name={`Revoke key ${k.name}`} danger onClick={() => setRevoking(k)}>
                        Revoke
                      </RowButton>
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </Table>
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
      <ConfirmOn
        item={revoking}
        title={`Revoke key ${revoking?.name ?? ""}`}
        confirmLabel={own ? "Revoke and sign out" : "Revoke"}
        danger
        onClose={() => setRevoking(null)}
        onConfirm={async (k) => {
          await del(`/api/v1/keys/${enc(k.id)}`);
          if (own) {
            signOut();
            return;
          }
          setNotice(`Key ${k.name} revoked: gateways refuse it within a minute.`);
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
      </ConfirmOn>
    </Screen>
  );
}
