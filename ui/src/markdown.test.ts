import { plainPreview, renderMarkdown } from "./markdown";

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

describe("plainPreview", () => {
  it("shows a row the words, not the markdown", () => {
    expect(plainPreview("## Results\n\n**p95** fell to `120 ms` — see [the run](https://x.y)")).toBe("Results · p95 fell to 120 ms — see the run");
    expect(plainPreview("| model | @10 |\n|---|---|\n| bm25 | 49.9 |")).toBe("model · @10 · bm25 · 49.9");
    expect(plainPreview("- [x] done\n- todo\n> quoted")).toBe("done · todo quoted");
    expect(plainPreview("Move staging\n\n1. snapshot the DB\n2. flip the flag")).toBe("Move staging · snapshot the DB · flip the flag");
    expect(plainPreview("```sh\npad note hi\n```")).toBe("pad note hi");
  });
});

describe("plainPreview keeps identifiers", () => {
  it("leaves underscores and lone stars alone", () => {
    expect(plainPreview("window.__pwned = 1 and snake_case_name")).toBe("window.__pwned = 1 and snake_case_name");
    expect(plainPreview("2 * 3 * 4 and *emphasis*")).toBe("2 * 3 * 4 and emphasis");
  });
});
