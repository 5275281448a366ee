// Step through the pre-rendered plies: buttons, arrow keys and #ply=N.
(() => {
  const box = document.getElementById("stepper");
  if (!box) return;
  const plies = [...box.querySelectorAll("section.ply")];
  const last = plies.length - 1;
  const no = document.getElementById("ply-no");
  let cur = plies.findIndex((p) => !p.hidden);
  function show(n, setHash) {
    cur = Math.max(0, Math.min(last, n));
    plies.forEach((p, i) => { p.hidden = i !== cur; });
    no.textContent = cur;
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
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, select, textarea") || e.altKey || e.ctrlKey || e.metaKey) return;
    const k = { ArrowRight: "next", ArrowLeft: "prev", Home: "first", End: "last" }[e.key];
    if (k) { e.preventDefault(); show(go[k](), true); }
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
