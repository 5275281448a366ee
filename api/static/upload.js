// Send the upload with the token as a bearer header; list the stored matches.
(() => {
  const form = document.getElementById("upload");
  const out = document.getElementById("result");
  if (!form) return;
  const el = (tag, text, attrs = {}) => {
    const e = document.createElement(tag);
    if (text !== undefined) e.textContent = text;
    Object.entries(attrs).forEach(([k, v]) => e.setAttribute(k, v));
    return e;
  };
  // "1 match", "2 matches"
  const count = (n, one, many = one + "s") => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
  // why the server refused, in plain words (its own detail for anything else)
  const refusal = (status, said) => {
    const detail = Array.isArray(said) ? said.map((d) => d.msg).join("; ") : said;
    return {
      401: "That token is not the server's: nothing was stored. Check it with whoever runs the server (it is their REPLAY_TOKEN).",
      403: "This server takes no uploads: it was started without a token.",
      413: "The file is too large: " + detail + ".",
      415: "That is not a table log: upload a .jsonl or .jsonl.gz file.",
    }[status] || `The upload failed: ${detail}.`;
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData();
    data.append("file", form.file.files[0]);
    out.replaceChildren(el("p", "Validating and storing…"));
    let res;
    try {
      res = await fetch("/api/upload", { method: "POST", body: data,
        headers: { Authorization: "Bearer " + form.token.value } });
    } catch {
      out.replaceChildren(el("p", "The server could not be reached. Nothing was stored; try again.", { class: "note bad" }));
      return;
    }
    const body = await res.json().catch(() => ({ detail: res.statusText }));
    if (!res.ok) { out.replaceChildren(el("p", refusal(res.status, body.detail), { class: "note bad" })); return; }
    const list = el("ul", undefined, { class: "changes" });
    body.matches.forEach((m) => {
      // the match named in the colour of its verdict, its findings beside it
      const li = el("li");
      const link = el("a", m.match, { href: m.url });
      if (m.errors) link.className = "err"; else if (m.warnings) link.className = "warn";
      li.append(link, " ", el("span", m.verdict, { class: "badge v-" + m.verdict }), ", " + count(m.hands, "hand"));
      if (m.errors) li.append(", ", el("span", count(m.errors, "error"), { class: "err" }));
      if (m.warnings) li.append(", ", el("span", count(m.warnings, "warning"), { class: "warn" }));
      const a = m.analysis;
      if (a.finished) {
        li.append(a.graded < a.finished ? `; grading pending (${a.graded} of ${count(a.finished, "hand")} graded)`
          : a.sampled < a.finished ? "; graded under perfect information" : "; graded");
      }
      list.append(li);
    });
    // what was found in the file, junk included: lines, bad lines, matches, findings
    const c = body.counts;
    const found = el("p", `${body.file}: ${count(c.lines, "line")}, ${c.bad_lines} bad; ${count(c.matches, "match", "matches")} ` +
      `stored, ${count(c.findings, "finding")}` +
      (body.already_stored ? " (the same file was stored before)" : ` in ${body.seconds} s`) + ".");
    const parts = [found];
    if (body.matches.length) parts.push(el("p", body.analysis, { class: "note" }));
    if (body.warning) parts.push(el("p", body.warning, { class: "note bad" }));
    if (body.problems.length > (body.warning ? 1 : 0)) {  // the warning names the first
      const probs = el("ul", undefined, { class: "changes" });
      body.problems.forEach((p) => probs.append(el("li", `${p.code}: ${p.message}`)));
      parts.push(probs);
    }
    out.replaceChildren(...parts, list);
  });
})();
