// Step through the plies: buttons, arrow keys and #ply=N. The board is drawn
// once; each ply is one style rule (as api/render.py's ply_style writes it)
// and the one unhidden notes section.
(() => {
  const box = document.getElementById("stepper");
  if (!box) return;
  const plies = [...box.querySelectorAll("section.ply")];
  const last = plies.length - 1;
  const no = document.getElementById("ply-no");
  const style = document.getElementById("ply-style");
  let cur = plies.findIndex((p) => !p.hidden);
  function rule(n) {
    const hide = [];
    for (let k = n + 1; k <= last; k++) hide.push("svg.board .on" + k);
    for (let k = 1; k <= n; k++) hide.push("svg.board .off" + k);
    return hide.length ? hide.join(",") + "{display:none}" : "";
  }
  function show(n, setHash) {
    cur = Math.max(0, Math.min(last, n));
    plies.forEach((p, i) => { p.hidden = i !== cur; });
    style.textContent = rule(cur);
    no.textContent = cur;
    document.querySelectorAll("svg.vgraph circle.current").forEach((c) => c.classList.remove("current"));
    const pt = document.querySelector(`svg.vgraph a[data-ply="${cur}"] circle`);
    if (pt) pt.classList.add("current");
    // the move list: the current ply marked and kept in view
    let mover = null;
    document.querySelectorAll("#movelist li").forEach((li) => {
      const on = parseInt(li.dataset.ply, 10) === cur;
      li.classList.toggle("cur", on);
      const a = li.querySelector("a");
      if (on) { a.setAttribute("aria-current", "step"); mover = li.dataset.seat; }
      else a.removeAttribute("aria-current");
      if (on && li.scrollIntoView) {
        const ol = li.parentElement;
        if (li.offsetTop < ol.scrollTop || li.offsetTop + li.offsetHeight > ol.scrollTop + ol.clientHeight)
          ol.scrollTop = li.offsetTop - ol.clientHeight / 2;
      }
    });
    // the seat to move: its hand stays shown when only what it knew is shown
    document.querySelectorAll("svg.board .place").forEach((g) => g.classList.toggle("mover", g.dataset.seat === mover));
    lines(plies[cur]);
    if (setHash) history.replaceState(null, "", "#ply=" + cur);
  }
  // the principal lines and the reasons of a decision: from the JSON twin, once
  let twin = null;
  const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
  const tile = (m) => (/^\d\d /.test(m) ? `[${m[0]}|${m[1]}] ${m.slice(3)}` : m);
  function lineBox(moves, steps, which) {
    const items = moves.map((m, i) => {
      const [seat, l, r] = steps[i];
      return `<li data-step="${i}"><span class="who">${seat}</span> ${esc(tile(m))} <small class="muted">${l < 0 ? "" : `ends ${l}·${r}`}</small></li>`;
    }).join("");
    return `<div class="pline" data-line="${which}"><h4>${which === "played" ? "Played" : "Best"} line `
      + '<button type="button" class="btn small" data-lstep="-1" aria-label="back one move">◀</button>'
      + '<button type="button" class="btn small" data-lstep="1" aria-label="on one move">▶</button></h4>'
      + `<ol>${items}</ol></div>`;
  }
  function stepper(box) {
    const items = [...box.querySelectorAll("li")];
    let at = -1;
    const paint = () => items.forEach((li, i) => { li.classList.toggle("on", i === at); li.classList.toggle("later", at >= 0 && i > at); });
    box.querySelectorAll("[data-lstep]").forEach((b) => b.addEventListener("click", () => {
      at = Math.max(-1, Math.min(items.length - 1, at + parseInt(b.dataset.lstep, 10)));
      paint();
    }));
    items.forEach((li, i) => li.addEventListener("click", () => { at = i; paint(); }));
  }
  function lines(section) {
    const why = section && section.querySelector(".why[data-pending]");
    if (!why || !box.dataset.json) return;
    why.removeAttribute("data-pending");
    if (!twin) twin = fetch(box.dataset.json).then((r) => r.json());
    twin.then((d) => {
      const r = (d.review || []).find((x) => x.ply === parseInt(section.dataset.ply, 10));
      if (!r || !r.line_played) return;
      const reasons = r.why.map((t) => `<li>${esc(t)}</li>`).join("");
      const same = r.best === r.played;
      why.insertAdjacentHTML("beforeend", `<ul class="reasons">${reasons}</ul><div class="plines">`
        + lineBox(r.line_played, r.steps_played, "played") + (same ? "" : lineBox(r.line_best, r.steps_best, "best")) + "</div>");
      why.querySelectorAll(".pline").forEach(stepper);
      why.dataset.ready = "";
    });
  }
  const fromHash = () => {
    const m = /ply=(\d+)/.exec(location.hash);
    if (m) show(parseInt(m[1], 10), false);
  };
  const go = { first: () => 0, prev: () => cur - 1, next: () => cur + 1, last: () => last };
  box.querySelectorAll("[data-go]").forEach((a) => a.addEventListener("click", (e) => {
    e.preventDefault();
    show(go[a.dataset.go](), true);
  }));
  // the analysis graph: each ply's point steps there (its link ?ply=N works without JS)
  document.querySelectorAll("svg.vgraph a[data-ply]").forEach((a) => a.addEventListener("click", (e) => {
    e.preventDefault();
    show(parseInt(a.dataset.ply, 10), true);
    box.scrollIntoView({ block: "nearest" });
  }));
  // the move list: a click steps there (its link ?ply=N works without JS)
  document.querySelectorAll("#movelist li a").forEach((a) => a.addEventListener("click", (e) => {
    e.preventDefault();
    show(parseInt(a.parentElement.dataset.ply, 10), true);
  }));
  // every hand, or only what the seat to move could see
  const only = document.getElementById("mover-only");
  if (only) only.addEventListener("click", () => {
    const on = only.getAttribute("aria-pressed") !== "true";
    only.setAttribute("aria-pressed", String(on));
    only.textContent = on ? "hands: the mover's" : "hands: all";
    document.querySelectorAll("svg.board").forEach((b) => b.classList.toggle("mover-only", on));
  });
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea") || e.altKey || e.ctrlKey || e.metaKey) return;
    const k = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last" }[e.key];
    if (k) { e.preventDefault(); show(go[k](), true); }
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
  lines(plies[cur]);
})();
