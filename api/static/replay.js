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
  // the board sticks below the controls: their height, as wrapped at this width
  const controls = box.querySelector(".controls");
  const fit = () => { if (controls) box.style.setProperty("--controls-h", controls.offsetHeight + "px"); };
  fit();
  window.addEventListener("resize", fit);
  function rule(n) {
    const hide = [];
    for (let k = n + 1; k <= last; k++) hide.push("svg.board .on" + k);
    for (let k = 1; k <= n; k++) hide.push("svg.board .off" + k);
    return hide.length ? hide.join(",") + "{display:none}" : "";
  }
  function show(n, setHash) {
    leaveLine();
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
  const NAMES = { played: "the line after the played move", best: "the line after the best move" };
  function lineBox(moves, steps, which) {
    const items = moves.map((m, i) => {
      const [seat, l, r] = steps[i];
      return `<li data-step="${i}"><span class="who">${seat}</span> ${esc(tile(m))} <small class="muted">${l < 0 ? "" : `ends ${l}·${r}`}</small></li>`;
    }).join("");
    const name = NAMES[which];
    return `<div class="pline" data-line="${which}" role="group" aria-label="${name}"><h4>${which === "played" ? "Line after the played move" : "Line after the best move"} `
      + `<button type="button" class="btn small" data-lstep="-1" aria-label="${name}: back one move">◀</button>`
      + `<button type="button" class="btn small" data-lstep="1" aria-label="${name}: on one move">▶</button></h4>`
      + '<p class="lstatus muted" aria-live="polite"></p>'
      + `<ol>${items}</ol></div>`;
  }
  // a line on the board: the position before the decision, and the line's
  // moves laid one by one as ghost tiles (the JSON twin's ghosts_played,
  // ghosts_best: each tile's slot, and where it sat in its seat's hand)
  const SVG = "http://www.w3.org/2000/svg";
  const board = box.querySelector("svg.board");
  let active = null; // the line on the board: {reset}
  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function ghostTile(g, now, parent) {
    const [sym, x, y, w, h] = g;
    const across = sym[0] === "h";
    const a = sym[1], b = sym[2];
    const t = el("g", { class: "lghost" + (now ? " now" : ""), transform: `translate(${x} ${y})` }, parent);
    el("title", {}, t).textContent = `[${Math.max(a, b)}|${Math.min(a, b)}]`;
    const s = el("svg", { width: w, height: h, viewBox: across ? "0 0 40 20" : "0 0 20 40" }, t);
    el("use", { href: across ? "#bh" : "#bv", width: across ? 40 : 20, height: across ? 20 : 40 }, s);
    el("use", { href: "#f" + a, width: 20, height: 20 }, s);
    el("use", { href: "#f" + b, width: 20, height: 20, [across ? "x" : "y"]: 20 }, s);
    if (now) el("rect", { x: -2, y: -2, width: w + 4, height: h + 4, rx: 4, class: "lnow" }, t);
  }
  // the felt grows (the bands round it move out) while a line reaches past it
  function grow(ghosts) {
    const felt = board && board.querySelector("rect.felt");
    if (!felt) return;
    const top = parseFloat(felt.getAttribute("y")), bottom = top + parseFloat(felt.getAttribute("height"));
    let need = 0;
    ghosts.forEach((g) => { if (g) need = Math.max(need, top + 6 - g[2], g[2] + g[4] - bottom + 6); });
    if (need <= 0) return;
    need = Math.ceil(need);
    const vb = board.getAttribute("viewBox").split(" ").map(Number);
    board.dataset.grown = JSON.stringify({ vb: board.getAttribute("viewBox"), h: board.getAttribute("height"),
      fy: felt.getAttribute("y"), fh: felt.getAttribute("height") });
    board.setAttribute("viewBox", `${vb[0]} ${vb[1] - need} ${vb[2]} ${vb[3] + 2 * need}`);
    board.setAttribute("height", vb[3] + 2 * need);
    felt.setAttribute("y", top - need);
    felt.setAttribute("height", bottom - top + 2 * need);
    board.querySelectorAll(".place.top, .place.bottom").forEach((p) => {
      const m = /translate\(([-\d.]+) ([-\d.]+)\)/.exec(p.getAttribute("transform"));
      p.dataset.at = p.getAttribute("transform");
      p.setAttribute("transform", `translate(${m[1]} ${parseFloat(m[2]) + (p.classList.contains("top") ? -need : need)})`);
    });
  }
  function shrink() {
    if (!board || !board.dataset.grown) return;
    const o = JSON.parse(board.dataset.grown);
    board.setAttribute("viewBox", o.vb);
    board.setAttribute("height", o.h);
    const felt = board.querySelector("rect.felt");
    felt.setAttribute("y", o.fy);
    felt.setAttribute("height", o.fh);
    board.querySelectorAll(".place[data-at]").forEach((p) => { p.setAttribute("transform", p.dataset.at); delete p.dataset.at; });
    delete board.dataset.grown;
  }
  function clearBoard() {
    if (!board) return;
    board.querySelectorAll(".lghosts, .lused").forEach((e) => e.remove());
    board.classList.remove("on-line");
    shrink();
  }
  function drawLine(ply, ghosts, at) {
    clearBoard();
    if (at < 0 || !board) { style.textContent = rule(cur); return; }
    style.textContent = rule(ply - 1); // the position the decision was made in
    board.classList.add("on-line");
    grow(ghosts);
    const layer = el("g", { class: "lghosts" }, board);
    for (let i = 0; i <= at; i++) {
      const g = ghosts[i];
      if (!g) continue;
      ghostTile(g, i === at, layer);
      if (g[5]) { // the tile leaves its seat's hand
        const [seat, hx, hy] = g[5];
        const place = board.querySelector(`.place[data-seat="${seat}"] > g`);
        if (place) el("rect", { x: hx - 1, y: hy - 1, width: 18, height: 37, rx: 3, class: "lused" }, place);
      }
    }
  }
  function stepper(lbox, ghosts, ply) {
    const items = [...lbox.querySelectorAll("li")];
    const status = lbox.querySelector(".lstatus");
    const name = NAMES[lbox.dataset.line];
    let at = -1;
    const paint = () => {
      items.forEach((li, i) => { li.classList.toggle("on", i === at); li.classList.toggle("later", at >= 0 && i > at); });
      lbox.classList.toggle("shown", at >= 0);
      status.textContent = at < 0 ? "" : `move ${at + 1} of ${items.length} of ${name}, on the board (the table before the decision)`;
      if (ghosts) drawLine(ply, ghosts, at);
    };
    const me = { reset: () => { at = -1; paint(); } };
    const go = (n) => {
      if (active && active !== me) { const other = active; active = null; other.reset(); }
      at = Math.max(-1, Math.min(items.length - 1, n));
      active = at >= 0 ? me : null;
      paint();
    };
    lbox.querySelectorAll("[data-lstep]").forEach((b) => b.addEventListener("click", () => go(at + parseInt(b.dataset.lstep, 10))));
    items.forEach((li, i) => li.addEventListener("click", () => go(i)));
    // the keys step the line while the focus is in it; Escape goes back to the hand
    lbox.addEventListener("keydown", (e) => {
      const d = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (d) { e.preventDefault(); go(at + d); }
      else if (e.key === "Home") { e.preventDefault(); go(0); }
      else if (e.key === "End") { e.preventDefault(); go(items.length - 1); }
      else if (e.key === "Escape" && at >= 0) { e.preventDefault(); go(-1); }
    });
  }
  function leaveLine() {
    if (active) { const a = active; active = null; a.reset(); }
  }
  function lines(section) {
    const why = section && section.querySelector(".why[data-pending]");
    if (!why || !box.dataset.json) return;
    why.removeAttribute("data-pending");
    if (!twin) twin = fetch(box.dataset.json).then((r) => r.json());
    twin.then((d) => {
      const ply = parseInt(section.dataset.ply, 10);
      const r = (d.review || []).find((x) => x.ply === ply);
      if (!r || !r.line_played) return;
      const reasons = r.why.map((t) => `<li>${esc(t)}</li>`).join("");
      const same = r.best === r.played;
      why.insertAdjacentHTML("beforeend", `<ul class="reasons">${reasons}</ul><div class="plines">`
        + lineBox(r.line_played, r.steps_played, "played") + (same ? "" : lineBox(r.line_best, r.steps_best, "best")) + "</div>");
      why.querySelectorAll(".pline").forEach((lb) => stepper(lb, r["ghosts_" + lb.dataset.line], ply));
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
    if (e.target.closest("input, select, textarea, .pline") || e.altKey || e.ctrlKey || e.metaKey) return;
    const k = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last" }[e.key];
    if (k) { e.preventDefault(); show(go[k](), true); }
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
  lines(plies[cur]);
})();

// A graded hand not yet graded on what each seat could know: drawing it asked
// the server to grade its match first (api.grading.match_progress). Ask the
// match's JSON every few seconds, say so on the page, and reload once the
// match's grades are stored.
(() => {
  const box = document.getElementById("stepper");
  const notes = document.querySelectorAll(".unsampled");
  if (!box || !box.dataset.match || !notes.length) return;
  const say = (text) => notes.forEach((n) => { n.textContent = text; });
  const tick = async () => {
    try {
      const r = await fetch(box.dataset.match, { headers: { accept: "application/json" } });
      if (r.ok) {
        const g = (await r.json()).match_grading;
        if (!g || g.state === "off") return; // no background grading here: "known" comes later
        if (g.state === "done") { location.reload(); return; }
        say(g.state === "grading" && g.seconds_left
          ? `(being graded on what the seat could know now: about ${g.seconds_left} s left; the page reloads then)`
          : "(being graded on what the seat could know now; the page reloads when it is done)");
      }
    } catch (e) {
      // the server restarting, or the network: try again
    }
    setTimeout(tick, 4000);
  };
  tick();
})();
