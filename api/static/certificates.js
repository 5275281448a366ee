// Issue a certificate with the token as a bearer header, then reload the list.
(() => {
  const form = document.getElementById("issue");
  const out = document.getElementById("result");
  if (!form) return;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { from: form.from.value, to: form.to.value };
    if (form.table.value) body.table = form.table.value;
    if (form.profile.value) body.profile = form.profile.value;
    const p = document.createElement("p");
    p.textContent = "Computing, rendering and signing…";
    out.replaceChildren(p);
    const res = await fetch("/api/certificates", { method: "POST", body: JSON.stringify(body),
      headers: { "Content-Type": "application/json", Authorization: "Bearer " + form.token.value } });
    const got = await res.json().catch(() => ({ detail: res.statusText }));
    if (!res.ok) {
      p.className = "note bad";
      p.textContent = res.status + ": " + (typeof got.detail === "string" ? got.detail : JSON.stringify(got.detail));
      return;
    }
    p.textContent = "Issued " + got.id + ": " + got.verdict;
    window.location.reload();
  });
})();
