// A small history router for the console's screens under /console/.
import type { ComponentChildren, JSX } from "preact";
import { useEffect, useState } from "preact/hooks";

export const BASE = "/console";

type Listener = () => void;
const listeners = new Set<Listener>();

function notify() {
  for (const l of listeners) l();
}
if (typeof window !== "undefined") window.addEventListener("popstate", notify);

/** navigate goes to a console path ("/queues/x?state=dead"), adding a history entry unless replace. */
export function navigate(to: string, replace = false) {
  const url = to.startsWith(BASE) ? to : BASE + to;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  notify();
}

export interface Location {
  /** path below /console, starting with "/" */
  path: string;
  query: URLSearchParams;
}

export function currentLocation(): Location {
  let p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : location.pathname;
  if (p === "") p = "/";
  return { path: p, query: new URLSearchParams(location.search) };
}

/** useLocation re-renders on navigation. */
export function useLocation(): Location {
  const [loc, setLoc] = useState(currentLocation);
  useEffect(() => {
    const l = () => setLoc(currentLocation());
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return loc;
}

/** match matches a pattern like "/queues/:name" and answers its decoded params, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const ps = pattern.split("/").filter(Boolean);
  const xs = path.split("/").filter(Boolean);
  if (ps.length !== xs.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < ps.length; i++) {
    if (ps[i].startsWith(":")) {
      try {
        out[ps[i].slice(1)] = decodeURIComponent(xs[i]);
      } catch {
        return null;
      }
    } else if (ps[i] !== xs[i]) return null;
  }
  return out;
}

/** setQuery replaces the current URL's query (filters live in the URL, so they survive reloads and can be shared). */
export function setQuery(params: URLSearchParams) {
  const s = params.toString();
  navigate(currentLocation().path + (s ? "?" + s : ""), true);
}

/** setParam sets one parameter of the URL's query (empty: removes it), keeping the others. */
export function setParam(key: string, value: string) {
  const params = new URLSearchParams(currentLocation().query);
  if (value) params.set(key, value);
  else params.delete(key);
  setQuery(params);
}

type LinkProps = { href: string; children?: ComponentChildren } & Omit<JSX.HTMLAttributes<HTMLAnchorElement>, "href">;

/** Link is an anchor that navigates without reloading (plain clicks only). */
export function Link({ href, children, onClick, ...rest }: LinkProps) {
  const url = href.startsWith(BASE) ? href : BASE + href;
  return (
    <a
      {...rest}
      href={url}
      onClick={(e) => {
        if (typeof onClick === "function") onClick(e);
        if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(url);
      }}
    >
      {children}
    </a>
  );
}
