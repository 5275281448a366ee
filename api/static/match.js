// A match page whose match is being graded on what each player could know
// (its note says so: api.grading.match_progress): ask the match's JSON twin
// every few seconds, which also keeps the match first in the grader's line,
// and reload the page when the new grades are stored.
(() => {
  const note = document.querySelector('#grading[data-state="grading"], #grading[data-state="next"]');
  if (!note) return;
  const twin = note.dataset.twin;
  const tick = async () => {
    try {
      const r = await fetch(twin, { headers: { accept: "application/json" } });
      if (r.ok) {
        const g = (await r.json()).match_grading;
        if (!g || g.state === "done" || String(g.sampled_hands) !== note.dataset.sampled) {
          location.reload();
          return;
        }
        if (g.state === "off") return; // the grader stopped: nothing will come
      }
    } catch (e) {
      // the server restarting, or the network: try again
    }
    setTimeout(tick, 3000);
  };
  setTimeout(tick, 3000);
})();
