import { renderMarkdown } from "./markdown";

function dom(html: string): HTMLElement {
  const d = document.createElement("div");
  d.innerHTML = html;
  return d;
}

describe("renderMarkdown", () => {
  it("renders the usual markdown", () => {
    const d = dom(renderMarkdown("**bold** and `code`\n\n- one\n- two\n\n[site](https://example.com)"));
    expect(d.querySelector("strong")?.textContent).toBe("bold");
    expect(d.querySelector("code")?.textContent).toBe("code");
    expect(d.querySelectorAll("li")).toHaveLength(2);
    expect(d.querySelector("a")?.getAttribute("href")).toBe("https://example.com");
  });

  it("shows script and event-handler HTML as text, never as elements", () => {
    for (const evil of [
      "<script>window.pwned = 1</script>",
      "<img src=x onerror=\"window.pwned = 1\">",
      "hello <b onmouseover=alert(1)>there</b>",
      "<iframe src=\"javascript:alert(1)\"></iframe>",
      "<svg onload=alert(1)></svg>",
    ]) {
      const html = renderMarkdown(evil);
      const d = dom(html);
      expect(d.querySelector("script, img, iframe, svg, [onerror], [onload], [onmouseover]")).toBeNull();
      expect(d.textContent).toContain(evil.includes("hello") ? "<b onmouseover" : evil.slice(0, 5));
    }
  });

  it("drops javascript: links", () => {
    const d = dom(renderMarkdown("[click](javascript:alert(1)) [ok](https://a.b)"));
    const links = [...d.querySelectorAll("a")];
    expect(links.every((a) => !(a.getAttribute("href") ?? "").startsWith("javascript"))).toBe(true);
  });
});
