/// <reference lib="dom" />
/**
 * The DOM helpers every page builds with: elements from attributes and children, SVG elements,
 * the page's content and its breadcrumbs. Text goes in as text nodes: no HTML from data.
 */

export type Child = Node | string | number | null | undefined | false;

type Attr = string | number | boolean | null | undefined | ((e: Event) => void);

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, Attr> = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.replace(/^on/, ""), v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "number" ? String(c) : c);
  }
  return el;
}

const SVG = "http://www.w3.org/2000/svg";

export function s(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** A table with a header row of plain labels and the given body rows. */
export function table(
  attrs: Record<string, Attr>,
  header: string[],
  rows: (HTMLElement | null)[],
): HTMLTableElement {
  return h(
    "table",
    attrs,
    h("thead", {}, h("tr", {}, ...header.map((t) => h("th", {}, t)))),
    h("tbody", {}, rows),
  );
}

export const app = () => document.getElementById("app") as HTMLElement;

/** Replaces the page's content, skipping absent parts. */
export function put(...children: Child[]): void {
  app().replaceChildren(
    ...children.flatMap((c) =>
      c === null || c === undefined || c === false ? [] : [typeof c === "number" ? String(c) : c],
    ),
  );
}

export function crumbs(...parts: [string, string | null][]): void {
  const nav = document.getElementById("crumbs") as HTMLElement;
  nav.replaceChildren(
    ...parts.flatMap(([label, href], i) => [
      i > 0 ? " / " : "",
      href ? h("a", { href }, label) : h("span", {}, label),
    ]),
  );
}

export function fail(e: unknown): void {
  app().replaceChildren(
    h("p", { class: "error", id: "load-error" }, `Cannot load: ${(e as Error).message}`),
  );
}
