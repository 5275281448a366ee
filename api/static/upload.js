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
    out.replaceChildren(el("p", `${body.file}: ${body.matches.length} match(es) stored in ${body.seconds} s`), list);
  });
})();
