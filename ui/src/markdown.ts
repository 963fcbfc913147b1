// Entry content as markdown, made safe: marked renders, DOMPurify removes
// anything that could run (script, event handlers, javascript: URLs, …).
// Raw HTML in an entry is shown as text, never interpreted.

import DOMPurify from "dompurify";
import { Marked } from "marked";

const md = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    // HTML written into an entry is displayed, escaped, as what it is.
    html({ text }) {
      return escapeHtml(text);
    },
  },
});

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

const ALLOWED_TAGS = [
  "p", "br", "strong", "em", "del", "code", "pre", "blockquote", "ul", "ol", "li",
  "h1", "h2", "h3", "h4", "h5", "h6", "a", "hr", "table", "thead", "tbody", "tr",
  "th", "td", "input", "span",
];

/** Safe HTML for `text`. Links keep their address as a title and never
 *  navigate the app (the view intercepts clicks); images are not loaded. */
export function renderMarkdown(text: string): string {
  const html = md.parse(text) as string;
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ["href", "title", "type", "checked", "disabled", "class"],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  });
}

/** A one-line preview of markdown for a row: the words, without the
 *  syntax (headings' #, emphasis, code fences, table pipes and rules, link
 *  targets), whitespace collapsed. */
export function plainPreview(text: string, max = 300): string {
  return text
    .replace(/```[^\n]*\n?/g, " ")
    .replace(/^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/gm, " ")
    .replace(/^\s{0,3}#{1,6}\s+/gm, "")
    .replace(/^\s{0,3}>\s?/gm, "")
    // List items and paragraphs stay apart: "Plan · snapshot · migrate".
    .replace(/^\s*([-*+]|\d+\.)\s+(\[[ xX]\]\s+)?/gm, " · ")
    .replace(/\n\s*\n/g, " · ")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    // Emphasis and code, but not the underscores of identifiers.
    .replace(/(\*\*|~~|`)(?=\S)([^\n]*?\S)\1/g, "$2")
    .replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?=[^\w*]|$)/g, "$1$2")
    .replace(/\s*\|\s*/g, " · ")
    .replace(/\s+/g, " ")
    .replace(/·( ·)+/g, "·")
    .replace(/^ · | · $/g, "")
    .trim()
    .slice(0, max);
}
