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
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData();
    data.append("file", form.file.files[0]);
    out.replaceChildren(el("p", "Validating and storing…"));
    const res = await fetch("/api/upload", { method: "POST", body: data,
      headers: { Authorization: "Bearer " + form.token.value } });
    const body = await res.json().catch(() => ({ detail: res.statusText }));
    if (!res.ok) { out.replaceChildren(el("p", res.status + ": " + body.detail, { class: "note bad" })); return; }
    const list = el("ul", undefined, { class: "changes" });
    body.matches.forEach((m) => {
      const li = el("li");
      li.append(el("a", m.match, { href: m.url }), " " + m.verdict + ", " + m.hands + " hands");
      list.append(li);
    });
    // what was found in the file, junk included: lines, bad lines, matches, findings
    const c = body.counts;
    const found = el("p", `${body.file}: ${c.lines} line(s), ${c.bad_lines} bad; ${c.matches} match(es) stored, ` +
      `${c.findings} finding(s)` + (body.already_stored ? " (the same file was stored before)" : ` in ${body.seconds} s`));
    const parts = [found];
    if (body.warning) parts.push(el("p", body.warning, { class: "note bad" }));
    if (body.problems.length > (body.warning ? 1 : 0)) {  // the warning names the first
      const probs = el("ul", undefined, { class: "changes" });
      body.problems.forEach((p) => probs.append(el("li", `${p.code}: ${p.message}`)));
      parts.push(probs);
    }
    out.replaceChildren(...parts, list);
  });
})();
