// Start a partner-peeking audit with the token as a bearer header; then
// poll the player's signals until the audit is done, and reload.
(() => {
  const form = document.getElementById("audit");
  const out = document.getElementById("audit-result");
  if (!form) return;
  const say = (text, cls) => {
    const p = document.createElement("p");
    p.textContent = text;
    if (cls) p.className = cls;
    out.replaceChildren(p);
  };
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const q = new URLSearchParams({ player: form.dataset.player, hands: form.hands.value, samples: form.samples.value });
    say("Starting the audit…");
    const res = await fetch(form.action + "?" + q, { method: "POST",
      headers: { Authorization: "Bearer " + form.token.value } });
    const body = await res.json().catch(() => ({ detail: res.statusText }));
    if (!res.ok) { say(res.status + ": " + body.detail, "note bad"); return; }
    say("Audit under way: grading " + body.hands + " hands at most, " + body.samples + " sampled deals a decision…", "note");
    const poll = async () => {
      const r = await fetch(body.status);
      const s = await r.json().catch(() => ({}));
      if (s.audit && s.audit.state !== "running") { window.location.reload(); return; }
      setTimeout(poll, 2000);
    };
    setTimeout(poll, 2000);
  });
})();
