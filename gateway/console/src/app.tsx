// The console's shell: sign-in, the signed-in layout (navigation,
// namespace switcher, live indicator, theme, sign-out) and the screens.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { get, namespace as currentNamespace, onSignedOut, setNamespace } from "./api";
import { useStreamState } from "./hooks";
import { Link, match, navigate, useLocation } from "./router";
import { allows, Ctx, loadSession, signIn, signOut, ssoStartURL, takeSSOError, whoLabel, type Session } from "./session";
import { ErrorBox, Field, useAsync } from "./components/ui";
import { Options } from "./components/forms";
import { routes } from "./routes";
import { EnqueueButton } from "./screens/enqueue";

const NS_KEY = "jobbie.namespace"; // only a namespace name: never a secret
const THEME_KEY = "jobbie.theme";

function initialTheme(): "light" | "dark" {
  const t = localStorage.getItem(THEME_KEY);
  if (t === "light" || t === "dark") return t;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

/** resumeSession loads the session in the namespace last used here; one the key may not use falls back to the key's default. */
async function resumeSession(): Promise<Session | null> {
  const saved = localStorage.getItem(NS_KEY) ?? "";
  let s = await loadSession(saved || undefined);
  if (s && saved && s.namespace !== saved) s = await loadSession(s.default_namespace);
  if (s) setNamespace(s.namespace);
  return s;
}

export function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [error, setError] = useState<Error | null>(null);
  const [theme, setTheme] = useState(initialTheme);

  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);

  useEffect(() => {
    onSignedOut(() => setSession(null));
    resumeSession().then(setSession, (e) => {
      setError(e);
      setSession(null);
    });
  }, []);

  const toggleTheme = () => {
    const next = theme === "dark" ? "light" : "dark";
    localStorage.setItem(THEME_KEY, next);
    setTheme(next);
  };

  if (session === undefined) return <p class="boot muted">Loading…</p>;
  if (session === null)
    return (
      <SignIn
        error={error}
        onSignedIn={async () => setSession(await resumeSession())}
      />
    );
  return (
    <Shell
      session={session}
      theme={theme}
      toggleTheme={toggleTheme}
      onNamespace={async (ns) => {
        localStorage.setItem(NS_KEY, ns);
        const s = await loadSession(ns);
        if (s) setNamespace(s.namespace);
        setSession(s);
        navigate("/");
      }}
      onSignOut={async () => {
        await signOut().catch(() => {});
        setSession(null);
        navigate("/", true);
      }}
    />
  );
}

function SignIn(props: { error: Error | null; onSignedIn: () => Promise<void> }) {
  const [key, setKey] = useState("");
  const [org, setOrg] = useState("");
  const [ssoError] = useState(takeSSOError);
  const { busy, error, run } = useAsync(props.error);
  return (
    <main class="signin">
      <div class="signin-forms">
        <form
          id="signin-sso"
          onSubmit={(e) => {
            e.preventDefault();
            location.assign(ssoStartURL(org));
          }}
        >
          <h1>Jobbie console</h1>
          <p class="muted">Sign in through your organization's identity provider.</p>
          <Field label="Tenant name or work email" for="sso-tenant">
            <input
              id="sso-tenant"
              autoComplete="email"
              spellcheck={false}
              required
              value={org}
              onInput={(e) => setOrg(e.currentTarget.value)}
            />
          </Field>
          <ErrorBox id="signin-sso-error" error={ssoError} />
          <button id="signin-sso-submit" type="submit" class="primary">
            Sign in with SSO
          </button>
        </form>
        <form
          id="signin"
          onSubmit={(e) => {
            e.preventDefault();
            run(async () => {
              await signIn(key.trim());
              setKey("");
              await props.onSignedIn();
            });
          }}
        >
          <p class="muted">
            Or sign in with an API key. It is exchanged for a session that ends after a while idle (and a few hours at most); the key is not stored
            in the browser.
          </p>
          <Field label="API key" for="api-key">
            <input
              id="api-key"
              type="password"
              autoComplete="off"
              spellcheck={false}
              required
              value={key}
              onInput={(e) => setKey(e.currentTarget.value)}
            />
          </Field>
          <ErrorBox id="signin-error" error={error} />
          <button id="signin-submit" type="submit" disabled={busy}>
            {busy ? "Signing in…" : "Sign in with a key"}
          </button>
        </form>
      </div>
    </main>
  );
}

const nav: { href: string; label: string; act?: string }[] = [
  { href: "/", label: "Dashboard" },
  { href: "/queues", label: "Queues", act: "queue.read" },
  { href: "/jobs", label: "Jobs", act: "job.read" },
  { href: "/dead", label: "Dead letter", act: "job.read" },
  { href: "/held", label: "Held jobs", act: "job.manage" },
  { href: "/schedules", label: "Schedules", act: "schedule.read" },
  { href: "/batches", label: "Batches", act: "job.read" },
  { href: "/workers", label: "Workers", act: "queue.read" },
  { href: "/events", label: "Live events", act: "job.read" },
  { href: "/webhooks", label: "Webhooks", act: "webhook.read" },
  { href: "/alerts", label: "Alerts", act: "namespace.read" },
  { href: "/costs", label: "Costs", act: "usage.read" },
  { href: "/namespaces", label: "Namespaces", act: "namespace.read" },
  { href: "/backups", label: "Backups", act: "backup.read" },
  { href: "/shards", label: "Shards", act: "namespace.read" },
  { href: "/keys", label: "API keys", act: "key.read" },
  { href: "/roles", label: "Roles", act: "key.read" },
  { href: "/audit", label: "Audit log", act: "audit.read" },
  { href: "/usage", label: "Usage", act: "usage.read" },
  { href: "/invoices", label: "Invoices", act: "usage.read" },
];

function Shell(props: {
  session: Session;
  theme: string;
  toggleTheme: () => void;
  onNamespace: (ns: string) => void;
  onSignOut: () => void;
}) {
  const { session } = props;
  const loc = useLocation();
  const [menu, setMenu] = useState(false);
  const live = useStreamState();
  const ctx = useMemo(
    () => ({
      session,
      namespace: session.namespace,
      setNamespace: props.onNamespace,
      can: (act: string) => allows(session.actions, act),
      signOut: props.onSignOut,
    }),
    [session],
  );
  useEffect(() => setMenu(false), [loc.path]);

  let screen: ComponentChildren = <NotFound />;
  for (const r of routes) {
    const p = match(r.path, loc.path);
    if (p) {
      screen = r.render(p);
      break;
    }
  }
  return (
    <Ctx.Provider value={ctx}>
      <div class="shell">
        <header class="topbar">
          <button type="button" class="menu-toggle" aria-label="Menu" aria-expanded={menu} aria-controls="main-nav" onClick={() => setMenu(!menu)}>
            ☰
          </button>
          <Link href="/" class="brand">
            Jobbie
          </Link>
          <NamespaceSwitcher session={session} onChange={props.onNamespace} />
          <span class={"live live-" + live} title={"Live updates: " + live} aria-label={"Live updates: " + live} role="status">
            ● <span class="live-text">{live === "open" ? "live" : live}</span>
          </span>
          <div class="topbar-right">
            {ctx.can("job.enqueue") && <EnqueueButton />}
            <span
              class="who"
              id="signed-in"
              title={(session.person ? (session.person.email ?? session.person.subject) : "Key " + session.key_id) + " · signed in until " + new Date(session.ends_by).toLocaleString() + " at the latest"}
            >
              {session.person ? whoLabel(session) + " · " + session.role : session.role}
            </span>
            <button type="button" id="theme-toggle" onClick={props.toggleTheme} aria-label={props.theme === "dark" ? "Switch to light mode" : "Switch to dark mode"}>
              {props.theme === "dark" ? "☀" : "☾"}
            </button>
            <button type="button" id="signout" onClick={props.onSignOut}>
              Sign out
            </button>
          </div>
        </header>
        <nav id="main-nav" class={menu ? "sidebar open" : "sidebar"} aria-label="Main">
          <ul>
            {nav
              .filter((n) => !n.act || ctx.can(n.act))
              .map((n) => (
                <li key={n.href}>
                  <Link href={n.href} aria-current={isCurrent(n.href, loc.path) ? "page" : undefined}>
                    {n.label}
                  </Link>
                </li>
              ))}
          </ul>
        </nav>
        <main class="content" key={session.namespace}>
          {screen}
        </main>
      </div>
    </Ctx.Provider>
  );
}

function isCurrent(href: string, path: string) {
  return href === "/" ? path === "/" : path === href || path.startsWith(href + "/");
}

function NamespaceSwitcher(props: { session: Session; onChange: (ns: string) => void }) {
  const [names, setNames] = useState<string[]>(() => (props.session.namespaces.includes("*") ? [props.session.namespace] : props.session.namespaces));
  const [err, setErr] = useState<Error | null>(null);
  // Loaded at sign-in and again whenever the switcher gets focus, so a
  // namespace created since shows up.
  const load = () => {
    if (!allows(props.session.actions, "namespace.read")) return;
    get<{ namespaces: { name: string }[] }>("/api/v1/namespaces")
      .then((b) => {
        const all = b.namespaces.map((n) => n.name);
        const allowed = props.session.namespaces.includes("*") ? all : all.filter((n) => props.session.namespaces.includes(n));
        if (allowed.length) setNames(allowed);
        setErr(null);
      })
      .catch(setErr);
  };
  useEffect(load, [props.session.tenant_id]);
  const ns = currentNamespace();
  return (
    <label class="ns-switch" title={err ? err.message : undefined}>
      <span class="sr-only">Namespace</span>
      <select id="namespace" aria-label="Namespace" value={ns} onFocus={load} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <Options choices={names.includes(ns) ? names : [ns, ...names]} />
      </select>
    </label>
  );
}

function NotFound() {
  return (
    <section class="screen" data-screen="not-found" data-ready="true">
      <h1>Not found</h1>
      <ErrorBox error="There is no such page in the console." />
      <Link href="/">Back to the dashboard</Link>
    </section>
  );
}
