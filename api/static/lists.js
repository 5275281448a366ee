// Sticky filters for the lists (matches, findings, players). The address is
// the list's state: filters, sort and page travel in the query string, so a
// link, a reload or the back button shows the same rows, with or without
// JavaScript. This script adds two things:
// - the form sends only the fields that are filled in (clean addresses);
// - the last filters and sort of each list are kept in localStorage, and a
//   visit to the bare list (the menu's link) brings them back, with a note
//   and a link that clears them.
(() => {
  const form = document.querySelector("form[data-sticky]");
  if (!form) return;
  const key = "replay:filters:" + form.dataset.sticky;
  const kept = (search) => {
    const p = new URLSearchParams(search);
    p.delete("page");
    for (const [k, v] of [...p]) if (!v) p.delete(k);
    return p.toString();
  };
  let store = null;
  try { store = window.localStorage; } catch (e) { /* storage refused: the address alone keeps state */ }
  const now = kept(location.search);
  if (store) {
    const saved = store.getItem(key);
    if (!location.search && saved) {
      location.replace(location.pathname + "?" + saved + "#restored");
      return;
    }
    if (now) store.setItem(key, now);
  }
  if (location.hash === "#restored" && now) {
    const note = document.createElement("p");
    note.className = "note restored";
    note.innerHTML = "Filters restored from your last visit. ";
    const clear = document.createElement("a");
    clear.href = location.pathname;
    clear.textContent = "Show everything";
    clear.dataset.clear = "";
    note.append(clear);
    form.after(note);
    history.replaceState(null, "", location.pathname + location.search);
  }
  form.addEventListener("submit", () => {
    // empty fields are not sent: /matches?profile=x, not /matches?player=&table=&profile=x...
    for (const el of form.elements) if (el.name && !el.value) el.disabled = true;
    const chosen = kept(new URLSearchParams(new FormData(form)).toString());
    if (store) chosen ? store.setItem(key, chosen) : store.removeItem(key);
    setTimeout(() => { for (const el of form.elements) el.disabled = false; }, 0);
  });
  document.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-clear]");
    if (a && store) store.removeItem(key);
  });
})();
