// A training position or a puzzle: pick a move (click, or its number key),
// the answer is POSTed (a write: it carries the desk's token), and the
// reveal shows the values, the best move, the lines and why, and the schedule.
(() => {
  const box = document.getElementById("trainer");
  if (!box) return;
  const reveal = document.getElementById("reveal");
  const token = document.getElementById("desk-token");
  token.value = localStorage.getItem("replay-token") || "";
  const choices = [...box.querySelectorAll("button.choice")];
  let done = false;
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const tile = (m) => (m && /^\d\d /.test(m) ? `[${m[0]}|${m[1]}] ${m.slice(3)}` : m);
  function show(r) {
    const rows = r.alternatives.map((a) => `<tr class="${a.move === r.move ? "picked" : ""}${a.move === r.best ? " best" : ""}">`
      + `<td>${esc(tile(a.move))}${a.move === r.best ? " ★" : ""}${a.move === r.played ? " (played at the table)" : ""}</td>`
      + `<td class="num">${a.dd > 0 ? "+" : ""}${a.dd}</td><td class="num">${a.pimc == null ? "–" : a.pimc.toFixed(1)}</td></tr>`).join("");
    const verdict = r.solved === undefined ? (r.loss <= 0 ? "The best move." : `It loses ${r.loss} points (${esc(r.graded)}).`)
      : (r.solved ? "Solved: the best move." : `Not this one: ${esc(tile(r.answer))} is the move.`);
    const sched = r.schedule ? `<p class="schedule">Rated <b>${esc(r.schedule.rating)}</b>; back on ${esc(r.schedule.due)}.</p>` : "";
    const why = (r.why || []).map((t) => `<li>${esc(t)}</li>`).join("");
    const line = (ms) => (ms || []).map((m) => esc(tile(m))).join(" · ");
    reveal.innerHTML = `<p class="verdict" data-correct="${r.loss <= 0}">${verdict}</p>${sched}`
      + `<table class="alts-values"><thead><tr><th>move</th><th>exact</th><th>known</th></tr></thead><tbody>${rows}</tbody></table>`
      + (why ? `<h3>Why</h3><ul class="reasons">${why}</ul>` : "")
      + (r.line_best ? `<p class="muted">Best line: ${line(r.line_best)}</p>` : "")
      + (r.themes && r.themes.length ? `<p class="muted">Themes: ${esc(r.themes.join(", "))}</p>` : "");
    reveal.hidden = false;
    const next = document.getElementById("next");
    if (next) { next.hidden = false; next.focus(); }
  }
  async function pick(move) {
    if (done) return;
    localStorage.setItem("replay-token", token.value);
    const body = { match: box.dataset.match, hand: +box.dataset.hand, ply: +box.dataset.ply, move };
    if (box.dataset.player) body.player = box.dataset.player;
    const res = await fetch(box.dataset.post, {
      method: "POST", headers: { "Content-Type": "application/json", Authorization: "Bearer " + token.value },
      body: JSON.stringify(body),
    });
    if (!res.ok) {
      const err = await res.json().catch(() => ({}));
      reveal.innerHTML = `<p class="warn">${esc(res.status === 401 || res.status === 403 ? "Answers are writes: enter the desk's token, or your own player key (the token holder gives it: replay train-key)." : (err.detail || res.status))}</p>`;
      reveal.hidden = false;
      return;
    }
    done = true;
    choices.forEach((b) => { b.disabled = true; b.classList.toggle("picked", b.dataset.move === move); });
    show(await res.json());
  }
  choices.forEach((b) => b.addEventListener("click", () => pick(b.dataset.move)));
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea") || e.altKey || e.ctrlKey || e.metaKey) return;
    const k = parseInt(e.key, 10);
    if (k >= 1 && k <= choices.length) { e.preventDefault(); pick(choices[k - 1].dataset.move); }
  });
})();
