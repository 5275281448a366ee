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
    if (setHash) history.replaceState(null, "", "#ply=" + cur);
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
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea") || e.altKey || e.ctrlKey || e.metaKey) return;
    const k = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last" }[e.key];
    if (k) { e.preventDefault(); show(go[k](), true); }
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
