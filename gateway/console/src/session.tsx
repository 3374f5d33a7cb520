// The signed-in session, the namespace the console works in, and what the
// key's role may do there (to hide what it may not; the gateway refuses it
// anyway).
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { api, setNamespace } from "./api";

export interface Session {
  key_id: string;
  tenant_id: string;
  role: string;
  /** the namespaces the key may use; ["*"] for all */
  namespaces: string[];
  default_namespace: string;
  /** when the session ends if it stays idle (each request moves it on) */
  expires_at: string;
  /** when it ends however active it is */
  ends_by: string;
  /** what the role may do in the namespace asked about (X-Jobbie-Namespace), e.g. "queue.manage" */
  actions: string[];
  namespace: string;
  /** who signed in through the tenant's identity provider; absent for an API key's session */
  person?: { email?: string; name?: string; subject: string; issuer: string };
  /** present when the console is on a node's local API (an embedded Jobbie's listener): no control plane, so no tenant administration; the namespaces it serves */
  local?: { namespaces: string[] };
}

export const SESSION_PATH = "/console/api/session";

/** loadSession answers the current session for namespace ns, or null when signed out. */
export async function loadSession(ns?: string): Promise<Session | null> {
  if (ns) setNamespace(ns);
  try {
    return await api<Session>("GET", SESSION_PATH);
  } catch (e) {
    if ((e as { status?: number }).status === 401) return null;
    throw e;
  }
}

export async function signIn(apiKey: string): Promise<Session> {
  return api<Session>("POST", SESSION_PATH, { api_key: apiKey });
}

export const SSO_START_PATH = "/console/api/sso/start";

/** ssoStartURL is where "Sign in with SSO" sends the browser: by the tenant's name, or by an email (its domain finds the tenant). */
export function ssoStartURL(tenantOrEmail: string): string {
  const v = tenantOrEmail.trim();
  const q = new URLSearchParams(v.includes("@") ? { email: v } : { tenant: v });
  return SSO_START_PATH + "?" + q.toString();
}

/** takeSSOError reads (and removes from the address bar) the reason a sign-in through the identity provider was refused. */
export function takeSSOError(): string | null {
  const u = new URL(location.href);
  const msg = u.searchParams.get("sso_error");
  if (msg === null) return null;
  u.searchParams.delete("sso_error");
  u.searchParams.delete("sso_code");
  history.replaceState(null, "", u.pathname + u.search + u.hash);
  return msg || "Sign-in through the identity provider failed.";
}

/** whoLabel is how the shell names the signed-in session: the person, or the key. */
export function whoLabel(s: Pick<Session, "key_id" | "person">): string {
  if (s.person) return s.person.name || s.person.email || s.person.subject;
  return "Key " + s.key_id;
}

/** servedNamespaces are the namespaces a session may switch to without asking control: a local API's, else the key's own (just the current one for a key of all). */
export function servedNamespaces(s: Pick<Session, "namespaces" | "namespace" | "local">): string[] {
  const all = s.namespaces.includes("*");
  if (s.local) return s.local.namespaces.filter((n) => all || s.namespaces.includes(n));
  return all ? [s.namespace] : s.namespaces;
}

export async function signOut(): Promise<void> {
  await api("DELETE", SESSION_PATH);
}

/** allows reports whether actions grant act ("job.manage"); "*" and "job.*" patterns count. */
export function allows(actions: string[], act: string): boolean {
  return actions.some((a) => a === "*" || a === act || (a.endsWith(".*") && act.startsWith(a.slice(0, -1))));
}

export interface SessionContext {
  session: Session;
  namespace: string;
  setNamespace: (ns: string) => void;
  can: (act: string) => boolean;
  signOut: () => void;
}

export const Ctx = createContext<SessionContext | null>(null);

/** useSession is the signed-in session; screens render only inside it. */
export function useSession(): SessionContext {
  const c = useContext(Ctx);
  if (!c) throw new Error("useSession outside a session");
  return c;
}
