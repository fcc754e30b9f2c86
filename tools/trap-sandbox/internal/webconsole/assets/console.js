// trap-sandbox web console: the computer list and a live view of one computer's screen, on
// the host API (docs/screen.md). No framework, no build step: this file is served as it is.
"use strict";

const $ = (id) => document.getElementById(id);
// inputs.js, loaded before this script, is the gateway's list of the client version from
// which each screen.input type is taken (inputTypesSince). A reverse proxy that passes this
// script but not it (docs/reverse-proxy.md's location, written before the console had it) left
// the script to stop at its first use of the list, and the page showed its title alone.
if (typeof inputTypesSince === "undefined") {
  $("status").textContent = "This page's inputs.js did not load: a reverse proxy in front of the gateway must pass GET /console/inputs.js too (docs/reverse-proxy.md).";
  throw new Error("inputs.js did not load");
}
// tokenKey is where the tab keeps the token (sessionStorage: not in other tabs, gone when the
// tab closes), once the gateway has taken it (kept); one it refuses is not kept (refused).
const tokenKey = "trap-sandbox-token";
// A closed tab brought back (Ctrl+Shift+T, the browser's History, its session restore) gets its
// sessionStorage back, and with it the token: the next person at a shared machine reopened the
// tab the last one closed and found the console logged in. Such a page is loaded from the
// history (back_forward; a reload keeps the token, as a tab that stays open does): it forgets
// the token and asks again, saying why (reopenedNote).
const reopened = (performance.getEntriesByType("navigation")[0] || {}).type === "back_forward" &&
  sessionStorage.getItem(tokenKey) !== null;
if (reopened) sessionStorage.removeItem(tokenKey);
let reopenedNote = reopened ? "This tab was reopened: log in again (a tab keeps no token past its closing)." : "";
let token = sessionStorage.getItem(tokenKey) || ""; // the token the API's requests carry
let listTimer = null;
let view = null; // {traposId, abort, queue, down, pending, presses, sending, busy, dropped, sends, said, saidAt, live, shownLive, ctrl, typed, left, unsent, prevented, newest, drawing, held, drags, pressApart, saidDrags, accountId, learning, pressed, owed, opened, pasted, inFlight, retrying, sentAsQ, sentAsQAt}
// shown counts stop()s: an answer asked for before the latest one is for a page no longer
// shown (the list's, once a computer's view opened or the token form came back).
let shown = 0;

function headers(sent, extra) {
  const h = Object.assign({}, extra);
  if (sent) h.Authorization = "Bearer " + utf8(sent);
  return h;
}

// utf8 is text as its UTF-8 bytes, one character each: fetch sends a header's characters up to
// U+00FF as single bytes (a token with "ü" went as Latin-1 and was refused, one with "日"
// threw), and the gateway, as the CLI, takes a token as UTF-8.
function utf8(text) {
  return String.fromCharCode(...new TextEncoder().encode(text));
}

// fromUTF8 is utf8's inverse: a header's value as the gateway wrote it, UTF-8, which fetch
// gives as one character a byte ("küche" read "kÃ¼che").
function fromUTF8(bytes) {
  return new TextDecoder().decode(Uint8Array.from(bytes, (c) => c.charCodeAt(0)));
}

function status(text) { $("status").textContent = text; }

// showLogout shows the log-out button while this tab holds a token the gateway took (kept):
// not one typed at login that it has not answered yet, nor one it refused.
function showLogout() { $("logout").hidden = !token || sessionStorage.getItem(tokenKey) !== token; }

// kept keeps token sent in the tab, and shows Log out, once the gateway has answered a request
// that carried it past the API's auth (sent is still the tab's token: not one given up since).
function kept(sent) {
  if (!sent || sent !== token || sessionStorage.getItem(tokenKey) === sent) return;
  sessionStorage.setItem(tokenKey, sent);
  showLogout();
}

// forget drops the token: from the requests, the tab, the form's field and the header.
function forget() {
  token = "";
  sessionStorage.removeItem(tokenKey);
  $("token").value = "";
  showLogout();
}

// refused is the one answer to the gateway refusing the API's auth: a request refused (401,
// or 403 "unauthorized"), or a live view's stream ended "unauthorized" (the token revoked or
// expired meanwhile). sent is the token that was refused; once the tab holds another (Log out,
// a new login) the refusal is of none it holds, and changes nothing. Otherwise what was shown
// stops, a refused token is forgotten (wrong at login or revoked since: it opens nothing, so
// the tab does not keep it, nor offer to log it out), and the token form comes back saying
// why (a token's refusal in a person's words: tokenRefusal; without one, why the gateway asks
// for one); so does the status, which said "Live" or "Connecting…" beside the form. The form
// before any token is the player's, who was given one: the gateway's reason for asking (set
// SANDBOX_API_TOKEN, create an account, a foreign Host header) is its operator's, and goes
// below the form, addressed to them (operatorNote), not as the player's error.
function refused(sent, why) {
  if (sent !== token) return;
  stop();
  forget();
  show("login");
  $("login-error").textContent = sent ? why : "";
  $("login-operator").textContent = !sent && why ? operatorNote + why : "";
  $("login-operator").hidden = !!sent || !why;
  $("login-help").hidden = !!sent; // a refused token's words say where one comes from
  status(sent ? tokenRefused : reopenedNote);
}

// operatorNote begins the gateway's reason for asking a browser without a token for one, under
// the token form: words for whoever runs the gateway, not for the player at the form.
const operatorNote = "For the gateway's operator, why it asks this browser for a token: ";

// tokenRefusal is what the token form says when the gateway refused token sent, its answer's
// error being error ({code, message}). The API's words are for a program that calls it (the
// header to send, "from this host send no token", the command that makes a token): a person
// at the form is told what is wrong with what they gave, in no more detail than the answer
// (a token's name when it was revoked or has expired, as the answer says; never the token),
// and where a token comes from.
function tokenRefusal(sent, error) {
  const message = (error && error.message) || "";
  const ended = /^the token "(?:[^"\\]|\\.)*" (?:was revoked|has expired)(?=:)/.exec(message);
  let why;
  if (ended) why = "The gateway refused this token: " + ended[0] + ", and it opens nothing now.";
  else if (sent.startsWith("tsc_")) why = "This is a computer's credential (tsc_…), which a computer says hello with: it never opens the console.";
  else if (sent.startsWith("tsk_")) why = "This is an enrollment key (tsk_…), which links computers (sandbox link): it never opens the console.";
  else why = "The gateway does not know this token: check that you copied all of it, and nothing else.";
  return why + " " + whereTokensComeFrom;
}

// whereTokensComeFrom ends tokenRefusal: who gives a token, and where they read how.
const whereTokensComeFrom = "Ask the gateway's operator, or an admin of your account, for an API token: " +
  "how they make one is in trap-sandbox's docs/accounts.md (Accounts and API tokens). " +
  "The gateway's password, which a computer's install asks for, is not one.";

// tokenRefused is the status while the token form is back because the gateway refused the
// token the tab held (the form says the gateway's reason).
const tokenRefused = "The gateway refused the token: log in with another.";

// logOut forgets the token (the next person at a shared machine must not find it) and asks
// for one, in this tab and in every other tab of the console in this browser (tabsChannel):
// a second tab, logged in to watch another computer, stayed live with its token. The address
// loses the open computer's view, which the next token may not reach, and the page what it
// showed or held (the list, the screen, the Type and Paste fields), which stayed in it, hidden.
function logOut() {
  loggedOut("Logged out: no tab of this console holds the token now.");
  if (tabsChannel) tabsChannel.postMessage(loggedOutMessage);
}

// loggedOut is logOut in this tab, saying why in the status.
function loggedOut(why) {
  stop();
  forget();
  history.replaceState(null, "", location.pathname + location.search);
  $("login-error").textContent = "";
  $("login-operator").hidden = true;
  $("login-help").hidden = false;
  $("computer-list").replaceChildren();
  $("screen").replaceChildren();
  $("screen-text").textContent = "";
  shownUnseen("");
  $("type-text").value = "";
  $("paste-text").value = ""; // a text not pasted yet (a door's password?) is no next person's
  show("login");
  status(why);
  listWithoutToken(why);
}

// listWithoutToken lands loggedOut where a reload would: a gateway that answers this browser
// without a token (on loopback without SANDBOX_API_TOKEN) shows its list, saying why (why), and
// Log in with a token for another token; the form, asking for a token the API did not need,
// was gone at the next reload. A gateway that asks for one keeps the form, and a token given
// meanwhile is left to its login.
async function listWithoutToken(why) {
  const asked = shown;
  let res;
  try {
    res = await fetchOutliving("/trapos/computers", { headers: headers("") }, false);
  } catch { // the gateway away: the form stays, as a reload would show it once it is back
    return;
  }
  if (!res.ok || asked !== shown || token) return;
  openWithoutToken = true;
  stop();
  loadList(why);
  listTimer = setInterval(loadList, retryMs);
}

// openLogin is Log in with a token: the form, for a tab that holds no token on a gateway that
// shows its list without one (listWithoutToken), to give an account's token (one that reaches
// a computer of several accounts, say).
function openLogin() {
  stop();
  history.replaceState(null, "", location.pathname + location.search);
  $("login-error").textContent = "";
  $("login-operator").hidden = true;
  $("login-help").hidden = false;
  show("login");
  status("");
  $("token").focus();
}

// tabsChannel tells the console's other tabs in this browser (the same origin) that one logged
// out (loggedOutMessage): each tab keeps its own token (sessionStorage), and Log out is meant
// for them all. null where the browser has no BroadcastChannel.
const tabsChannel = typeof BroadcastChannel === "function" ? new BroadcastChannel("trap-sandbox-console") : null;
const loggedOutMessage = "logged out";

function show(section) {
  for (const id of ["login", "computers", "viewer"]) $(id).hidden = id !== section;
  showLoginOpen();
}

// openWithoutToken is whether the gateway has answered this tab's API call without a token
// past its auth (on loopback without SANDBOX_API_TOKEN): it shows its pages to no token, and
// only Log in with a token leads to the form.
let openWithoutToken = false;

// showLoginOpen shows Log in with a token on the list and a view the tab shows without a token,
// where the gateway answered without one.
function showLoginOpen() {
  $("login-open").hidden = !openWithoutToken || !!token || !$("login").hidden;
}

// consoleTitle is the page's title (index.html's) with no view open (stop): on the list and
// the token form.
const consoleTitle = document.title;

// titleMost bounds how many of a traposId's characters a tab's title shows (a label runs to
// 256 bytes): the computer's id and the start of its label tell tabs apart.
const titleMost = 40;

// titled names view v's computer in the tab's title, and its state where a person looking at
// the tab wants it ("waiting" while it is away, "connecting", "private"; none while its screen
// is shown live): every tab said "trap-sandbox console", and several computers open in tabs
// could not be told apart. The label is the computer's own words, set as the title's text
// (no markup), cut to titleMost characters, whole characters (a label's 😀 is not split).
function titled(v, state) {
  if (view !== v) return;
  const chars = Array.from(v.traposId);
  const name = chars.length > titleMost ? chars.slice(0, titleMost - 1).join("") + "…" : v.traposId;
  document.title = name + (v.monitor ? " — " + monitorWords(v.monitor) : "") + (state ? " — " + state : "");
}

// monitorWords names a monitor of the computer's for the page: "monitor top", its name cut as
// a title's label is, so a long one never fills the tab's title or the picker.
function monitorWords(monitor) {
  const chars = Array.from(monitor);
  return "monitor " + (chars.length > titleMost ? chars.slice(0, titleMost - 1).join("") + "…" : monitor);
}

// monitorHeading is the heading's words for a view of monitor (after the computer's traposId):
// which monitor, its text scale (textScale, its frame's; none before the first) and that it is
// read only. A monitor at text scale 0.5 shows twice the characters across and down of one at
// 1, which its drawing alone does not tell.
function monitorHeading(monitor, textScale) {
  return "— " + monitorWords(monitor) + (textScale > 0 ? ", text scale " + textScale : "") + " (read only: a monitor takes no keys)";
}

// screenHash is the page's fragment of computer traposId's own screen, or of its monitor named
// monitor ("": none), as the list's links and the picker (viewer-screen) make it.
function screenHash(traposId, monitor) {
  return "#/computer/" + encodeURIComponent(traposId) + (monitor ? "/monitor/" + encodeURIComponent(monitor) : "");
}

// learnMonitors asks view v's computer which monitors it has attached (screen.read's monitors,
// client 0.5.29 on, docs/screen.md) and offers them in the picker beside its own screen, once
// per view (again is to ask anew: a monitor taken off, followGone): a computer that does not
// say (an older client, a private screen, one away) offers none until it does. A monitor being
// viewed is offered whatever the answer once its first frame has named it (offerScreens), until
// it is taken off. The computer names 64 at most (client 0.5.32 on) and counts the rest
// (monitorsLeftOut), which the picker says.
async function learnMonitors(v, again) {
  if (v.monitors && !again) return;
  let monitors = null, leftOut = 0;
  try {
    const res = await api("/trapos/computers/" + encodeURIComponent(v.traposId) + "/requests", {
      method: "POST", headers: { "Content-Type": "application/json" }, signal: v.abort.signal,
      body: JSON.stringify({ type: "screen.read", payload: {}, timeoutMs: infoTimeoutMs }),
    });
    const body = res.ok ? await res.json() : null;
    const names = body && body.ok && body.payload && body.payload.monitors;
    if (Array.isArray(names)) monitors = names.filter((n) => typeof n === "string" && n !== "");
    const more = body && body.ok && body.payload && body.payload.monitorsLeftOut;
    if (Number.isSafeInteger(more) && more > 0) leftOut = more;
  } catch (e) {
    if (e.name === "AbortError" || e.message === "unauthorized") throw e;
    return;
  }
  if (view !== v || !monitors) return;
  v.monitors = monitors;
  v.monitorsLeftOut = leftOut;
  offerScreens(v);
}

// offerScreens fills the picker of view v's screens: the computer's own, then each monitor it
// named (v.monitors) and the one viewed; it shows only when there is one to pick. A monitor
// taken off (v.gone: why it is not shown) is not offered until the computer names it again: the
// picker shows it, "monitor top (taken off)", as what the view showed, and it cannot be
// picked; named again, it is offered as any monitor (picked, its view opens anew: pickScreen),
// the one shown saying its view ended; a link's monitor never shown (notAttached) is being
// opened then (followGone), and says so. Before, the monitor taken off was offered as one still
// there. Monitors the computer left out of its list (v.monitorsLeftOut) are said last, "40 more
// monitors, not listed", which cannot be picked: a link names one (screenHash). A monitor
// viewed that the list does not name (a link's Top, a monitor left out) waits for its first
// frame, which names it as the computer does (nameMonitor): Top may be top, offered already.
function offerScreens(v) {
  if (view !== v) return;
  const names = (v.monitors || []).slice();
  if (v.monitor && !v.gone && !names.includes(v.monitor)) {
    if (!v.monitorNamed) return; // the picker stays hidden, as open left it
    names.push(v.monitor);
  }
  const options = [new Option("its own screen", ""), ...names.map((n) => new Option(monitorWords(n), n))];
  let shown = null;
  if (v.gone) {
    const back = v.gone === notAttached ? "attached: opening it" : "its view ended";
    shown = new Option(monitorWords(v.monitor) + " (" + (names.includes(v.monitor) ? back : v.gone) + ")", goneValue);
    shown.disabled = true;
    options.splice(1, 0, shown);
  }
  if (v.monitorsLeftOut > 0) {
    const more = new Option(v.monitorsLeftOut + " more " + (v.monitorsLeftOut === 1 ? "monitor" : "monitors") + ", not listed", leftOutValue);
    more.disabled = true;
    options.push(more);
  }
  const picker = $("viewer-screen");
  picker.replaceChildren(...options);
  if (shown) shown.selected = true;
  else picker.value = v.monitor;
  $("viewer-screens").hidden = options.length === 1;
}

// goneValue is the picker's value of a monitor taken off (offerScreens): no monitor's name, as
// it is "" and no name a computer reports.
const goneValue = "\u0000taken off";

// notAttached is why a link's monitor is not shown (v.gone) when the computer has none by
// that name: its view never started, and opens once the monitor is attached (followGone).
const notAttached = "not attached";

// waitingAttached ends the status of a link's monitor not attached: the page waits for it.
const waitingAttached = " (waiting for it to be attached)";

// leftOutValue is the picker's value of the line saying how many monitors the computer left out
// of its list (offerScreens), no monitor's name either.
const leftOutValue = "\u0000left out";

// pickScreen opens the screen picked (value: a monitor's name, "" for the computer's own) of
// view v's computer, as a link would; a monitor whose view ended, picked once it is back, has
// the page's address already, which opens its view anew.
function pickScreen(v, value) {
  const hash = screenHash(v.traposId, value);
  if (location.hash === hash) route();
  else location.hash = hash;
}

// followGone follows view v's monitor taken off (why: "taken off" while viewed, notAttached
// when a link named it): the picker no longer offers it (offerScreens), and asks the computer
// which monitors it has again, after lookFirstMs doubling to lookMostMs and at once when the
// page regains the focus (lookAgain), until it names the monitor again. A monitor taken off
// is then offered by the picker, its view not opened again by itself: what it last showed
// stays to be read until the player picks it (docs/screen.md). A link's monitor not attached
// had no view, and the link asked for it: its view opens, as a link's computer that connects
// late is shown. It was offered beside one shown as "monitor left (its view ended)", for a
// view that never started.
async function followGone(v, why) {
  v.gone = why;
  // The computer says it has no such monitor now: its list from before, which named it, would
  // offer it as back ("its view ended") until the page asks again.
  if (v.monitors) v.monitors = v.monitors.filter((n) => n !== v.monitor);
  offerScreens(v);
  const backoff = { ms: 0 };
  while (!v.abort.signal.aborted) {
    await lookAgain(v, backoff);
    if (v.abort.signal.aborted) return;
    try {
      await learnMonitors(v, true);
    } catch (e) {
      if (e.name === "AbortError" || e.message === "unauthorized") return;
    }
    if (view === v && v.monitors && v.monitors.includes(v.monitor)) {
      if (why === notAttached) pickScreen(v, v.monitor);
      return;
    }
  }
}

// api fetches a host API route with the tab's token. The API's auth refusing (401, or 403
// "unauthorized": a browser not on loopback, or a host name the gateway does not answer
// without a token) is refused's, and throws "unauthorized", which the caller passes over in
// silence; a 403 "forbidden" is the computer owner's setting, the caller's to show. Any other
// answer below 500 got past the auth: the token is kept.
async function api(path, options) {
  const sent = token;
  const res = await fetchOutliving(path, Object.assign({}, options, { headers: headers(sent, options && options.headers) }), false);
  if (res.status === 401 || res.status === 403) {
    const body = await res.clone().json().catch(() => null);
    const error = body && body.error;
    if (res.status === 401 || (error && error.code === "unauthorized")) {
      refused(sent, sent ? tokenRefusal(sent, error) : res.status === 401 ? "" : (error ? error.message : ""));
      throw new Error("unauthorized");
    }
  }
  if (res.status < 500) kept(sent);
  if (!sent && res.status < 500 && !openWithoutToken) {
    openWithoutToken = true;
    showLoginOpen();
  }
  reopenedNote = ""; // said at the first refusal, or not needed
  return res;
}

// ---- the computer list

// partialListHeader, on the list's answer, says why the list leaves computers out: a replica
// cut off from NATS lists only the computers it holds (docs/scale-out.md). Its words are the
// gateway's, as trap-sandbox computers and MCP's list_computers say them.
const partialListHeader = "X-Trapos-Partial-List";

// showPartial shows above the list why it leaves computers out (partialListHeader's value), or
// nothing for a whole list: the other replicas' computers looked gone, "No computer is
// connected" under an empty one.
function showPartial(why) {
  const note = $("partial-list");
  note.textContent = why ? why[0].toUpperCase() + why.slice(1) + "." : "";
  note.hidden = !why;
}

// loadList shows the list, with note (none: "") in the status.
async function loadList(note) {
  const asked = shown;
  try {
    const res = await api("/trapos/computers");
    // A computer was opened, or the token form came back, while the list loaded: that stays.
    if (asked !== shown) return;
    if (!res.ok) { status("The gateway answered " + res.status); return; }
    const computers = await res.json();
    if (asked !== shown) return;
    const partial = res.headers.get(partialListHeader);
    const body = $("computer-list");
    body.replaceChildren();
    // Replicas sharing their computers over NATS name the one holding each computer's socket
    // (docs/scale-out.md), as trap-sandbox computers' REPLICA column does; a single gateway
    // names none, and its list has no such column.
    const replicas = computers.some((c) => c.replica);
    $("replica-column").hidden = !replicas;
    for (const c of computers) {
      const tr = document.createElement("tr");
      const link = document.createElement("a");
      // The gateway's shown form (docs/http-api.md): a no-break space, a soft hyphen or a
      // trailing space escaped, so that no computer passes for another; the API takes it back.
      const id = c.shown || c.traposId;
      link.href = "#/computer/" + encodeURIComponent(id);
      link.textContent = id;
      const cells = [link, c.accountId, "connected", new Date(c.connectedSince).toLocaleString(),
        new Date(c.lastFrameAt).toLocaleTimeString(), c.remoteAddr];
      if (replicas) cells.push(c.replica || "");
      for (const v of cells) {
        const td = document.createElement("td");
        if (typeof v === "string") td.textContent = v; else td.append(v);
        tr.append(td);
      }
      tr.cells[2].className = "state";
      body.append(tr);
    }
    if (computers.length === 0) {
      const whose = await listOwner();
      if (asked !== shown) return;
      $("no-computers").textContent = whose ? "No computer of account " + whose +
        " is connected (this token reaches that account's computers only)." : "No computer is connected.";
    }
    body.classList.remove("stale");
    showPartial(partial ? fromUTF8(partial) : "");
    $("no-computers").hidden = computers.length > 0;
    show("computers");
    status(note || "");
  } catch (e) {
    if (e.message === "unauthorized" || asked !== shown) return;
    // The rows are what the gateway last said: while it cannot be asked, none is known to be
    // connected (a stopped gateway's computers are not), so the list stops saying so.
    const body = $("computer-list");
    body.classList.add("stale");
    for (const td of body.querySelectorAll("td.state")) td.textContent = "unknown";
    status(connectionLost);
  }
}

// owner is listOwner's answer for the token it was asked with.
let owner = { token: null, name: "" };

// listOwner is whose computers the list is when the tab's token is a user account's (tsa_…,
// which reaches that account's computers only: "No computer is connected" sent its holder
// looking for why none was, when others' were), as the gateway's account list says, asked
// once a token: a user's token sees its own account alone, an admin's its own admin account
// among any others. "" for a token that reaches every computer, or when it cannot be told.
async function listOwner() {
  const sent = token;
  if (owner.token === sent) return owner.name;
  let name = "";
  if (sent.startsWith("tsa_")) {
    try {
      const res = await api("/trapos/accounts");
      if (!res.ok) return "";
      const accounts = await res.json();
      if (accounts.length === 1 && accounts[0].role === "user") name = accounts[0].id;
    } catch (e) {
      if (e.message === "unauthorized") throw e;
      return ""; // the gateway went away meanwhile: asked again with the next list
    }
  }
  owner = { token: sent, name };
  return name;
}

// ---- the screen

// glyph is the character CC's font draws for byte c (the screen's text is U+0000-U+00FF).
// 0-31 are code page 437's symbols where CC's term_font.png has them: 0, 9, 10 and 13 are
// blank there, 14 and 15 are the notes (fakecraft's ccstr.Glyph, which the CLI's viewer
// draws with, has the same table).
const low = " ☺☻♥♦♣♠•◘  ♂♀ ♪♫►◄↕‼¶§▬↨↑↓→←∟↔▲▼";
function glyph(ch) {
  const c = ch.charCodeAt(0);
  if (c < 32) return low[c];
  if (c === 127) return "▒";
  // A browser draws the soft hyphen (173) only where it breaks a line: as itself it would
  // take no cell and pull the rest of its row one cell left. On CC's screen it is a cell.
  if (c === 0xad) return "-";
  if (isBlock(ch)) {
    const v = c - 0x80; // CC's 2x3 teletext blocks, as Unicode's sextants (for the text)
    if (v === 0) return " ";
    if (v === 21) return "▌";
    return String.fromCodePoint(0x1fb00 + v - (v < 21 ? 1 : 2));
  }
  return ch;
}

// isBlock reports whether ch is one of CC's 2x3 block characters (128-159).
function isBlock(ch) {
  const c = ch.charCodeAt(0);
  return c >= 0x80 && c < 0xa0;
}

// checker is CC's character 127, a checker that fills its cell (paint's canvas is drawn with
// it): a font's ▒ left a line of the background between two rows, which striped the canvas.
const checker = "\u007f";

// drawnAsBackground reports whether the page draws ch on its cell as CSS (cellBackground), not
// by a font: a block character or the checker.
function drawnAsBackground(ch) {
  return isBlock(ch) || ch === checker;
}

// cellBackground is the CSS background that draws ch (drawnAsBackground) in colours fg on bg,
// in the screen's row y (from 0): a block character by blockBackground; the checker as square
// checks, two across the cell and three down, each cell's carrying on its neighbours': two
// across end where the next cell's begin, and a row odd in the screen starts its three a check
// on (the tile's bottom at the cell's, a third down), so the rows above and below carry on too.
// Three each way put a check of the same colour on both sides of every cell's edge, which
// joined into stripes twice as wide.
function cellBackground(ch, fg, bg, y) {
  if (ch !== checker) return blockBackground(ch, fg, bg);
  return "repeating-conic-gradient(" + fg + " 0 25%, " + bg + " 0 50%) 0 " + (y % 2 ? "100%" : "0") + " / 100% 66.667%, " + bg;
}

// blockBackground draws block character ch on its cell as CSS: the background colour with
// each sixth whose bit is set in the text colour (bit 1 top left, 2 top right, 4 middle left,
// 8 middle right, 16 bottom left; CC leaves the bottom right to the background). Few fonts
// have Unicode's sextants, and a missing glyph is drawn as a box.
function blockBackground(ch, fg, bg) {
  const v = ch.charCodeAt(0) - 0x80;
  const layers = [];
  for (let bit = 0; bit < 5; bit++) {
    if (v & (1 << bit)) {
      const x = bit % 2 ? "100%" : "0", y = ["0", "50%", "100%"][bit >> 1];
      layers.push("linear-gradient(" + fg + ", " + fg + ") " + x + " " + y + " / 50% 33.4% no-repeat");
    }
  }
  layers.push(bg);
  return layers.join(", ");
}

function colourOf(palette, digit, colour) {
  const i = parseInt(digit, 16);
  let rgb = (palette && palette[isNaN(i) ? 0 : i]) || "#000000";
  if (!colour) { // a basic computer shows the palette in grey
    // CC's grey is the channels' average cut to a whole step, never rounded (for #rrggbb
    // colours CC's float arithmetic gives the same): console.Greyscale's rule in Go.
    const n = parseInt(rgb.slice(1), 16);
    const g = Math.floor(((n >> 16 & 255) + (n >> 8 & 255) + (n & 255)) / 3).toString(16).padStart(2, "0");
    rgb = "#" + g + g + g;
  }
  return rgb;
}

// unseenNote is the line under the screen naming rows the computer's mirror has not seen
// drawn whole (a frame's unknownRows: the boot's first lines, a prompt drawn on them since), as
// runs ("2-4, 6"), where the computer, or monitor (a monitor's frame's name; none for the
// computer's own screen), may show more than here; "" when there are none. trap-sandbox
// screen's status line words them the same (liveStatus, in Go).
function unseenNote(rows, monitor) {
  const runs = [];
  for (let i = 0; i < rows.length;) {
    let j = i;
    while (j + 1 < rows.length && rows[j + 1] === rows[j] + 1) j++;
    runs.push(j === i ? String(rows[i]) : rows[i] + "-" + rows[j]);
    i = j + 1;
  }
  const shownOn = monitor ? monitorWords(monitor) : "the computer";
  return runs.length ? "Rows not yet seen whole: " + runs.join(", ") + " (" + shownOn + " may show more there)." : "";
}

function draw(frame) {
  const screen = $("screen");
  const rows = [];
  const texts = [];
  const unseen = frame.unknownRows || []; // a client before 0.5.25 names none
  frame.rows.forEach((row, y) => {
    const div = document.createElement("div");
    div.className = unseen.includes(y + 1) ? "row unseen" : "row";
    const bytes = Array.from(row.text);
    const chars = bytes.map(glyph);
    const cursorX = frame.cursor.blink && frame.cursor.y === y + 1 ? frame.cursor.x - 1 : -1;
    // A run is cells of the same colours; a block character or the checker is a cell of its own.
    const runOf = (x) => drawnAsBackground(bytes[x]) ? "block " + x : row.fg[x] + row.bg[x] + (x === cursorX ? "c" : "");
    let start = 0;
    for (let x = 1; x <= chars.length; x++) {
      if (x < chars.length && runOf(x) === runOf(start)) continue;
      const span = document.createElement("span");
      span.textContent = chars.slice(start, x).join("");
      const fg = colourOf(frame.palette, row.fg[start], frame.colour);
      const bg = colourOf(frame.palette, row.bg[start], frame.colour);
      if (drawnAsBackground(bytes[start])) {
        span.className = "block";
        span.style.background = cellBackground(bytes[start], fg, bg, y);
      } else {
        span.style.color = fg;
        span.style.backgroundColor = bg;
      }
      if (start === cursorX) span.classList.add("cursor");
      div.append(span);
      start = x;
    }
    rows.push(div);
    texts.push(rowAsText(bytes, chars, y));
  });
  screen.replaceChildren(...rows);
  screen.dataset.width = frame.width;
  screen.dataset.mouse = String(frame.colour !== false); // takesMouse
  // A player sees only greys, and clicks that do nothing: the heading says why, in CC's words.
  $("viewer-kind").hidden = frame.colour !== false;
  if (view && view.monitor) $("viewer-monitor").textContent = monitorHeading(view.monitor, frame.textScale);
  screen.style.setProperty("--cols", frame.width); // the cell's size fits the window (console.css)
  screen.style.setProperty("--rows", frame.height);
  while (texts.length && !texts[texts.length - 1].length) texts.pop();
  $("screen-text").replaceChildren(...texts.flatMap((text, y) => y ? ["\n", ...text] : text));
  shownUnseen(unseenNote(unseen, frame.monitor));
  fitBelow();
  placeKeys();
  markWide();
}

// fitBelow tells the screen's style how much of the window's height what is under it takes,
// up to the Type field's end (--below, console.css): the on-screen keys and the Type field on a
// phone, the note of rows not yet seen. The screen is drawn small enough that it and they fit
// the window's height together: on a phone held sideways, or with its keyboard up, the keys were
// below the fold, or the screen's top above it when the Type field was in view. It tells the
// style too how far down the page the screen starts (--above: the header and the heading),
// which a screen grown past 16 px leaves in view. Neither height changes with the screen's size,
// as everything under it moves with its bottom.
function fitBelow() {
  const screen = $("screen"), touch = $("touch"), box = screen.getBoundingClientRect();
  if (!box.height) return; // not shown (console.css: private, blank): measured once it is
  let below = 0;
  if (getComputedStyle(touch).display !== "none") {
    below = touch.getBoundingClientRect().bottom + parseFloat(getComputedStyle(touch).marginBottom) - box.bottom;
  }
  setStyleVar(screen, "--below", Math.max(0, Math.ceil(below)) + "px");
  setStyleVar(screen, "--above", Math.max(0, Math.ceil(box.top + scrollY)) + "px");
}

// followPixelRatio tells the page's style how many of the display's pixels a CSS pixel is
// (--dppx: devicePixelRatio, the browser's zoom included), now and whenever it changes (the
// page zoomed, the window moved to another display), so the screen's cells are a whole
// number of them (console.css, --cell-step): paint's checker at a size between came out in
// squares a pixel apart in size, grey lines between them.
function followPixelRatio() {
  setStyleVar(document.documentElement, "--dppx", String(devicePixelRatio));
  matchMedia("(resolution: " + devicePixelRatio + "dppx)").addEventListener("change", followPixelRatio, { once: true });
}

// setStyleVar sets an element's custom property only when its value changes: draw() measures
// the page after every frame (fitBelow, then placeKeys), and a write, even of the same value,
// would make the browser lay the page out a second time for placeKeys's reads.
function setStyleVar(el, name, value) {
  if (el.style.getPropertyValue(name) !== value) el.style.setProperty(name, value);
}

// showTyping scrolls the page, while the Type field has the focus, so that the screen and the
// keys and field under it are in the window, which fits them (fitBelow): the field's end at the
// window's bottom when it was below it, the screen's top at the window's top when it was above.
// A phone's keyboard coming up for the field (the window made shorter) left the page where it
// was, the field under the keyboard or the screen's top above the window.
function showTyping() {
  const field = $("type-text"), touch = $("touch");
  if (document.activeElement !== field) return;
  const top = $("screen").getBoundingClientRect().top;
  const end = touch.getBoundingClientRect().bottom + parseFloat(getComputedStyle(touch).marginBottom);
  if (end > innerHeight) scrollBy(0, Math.ceil(end - innerHeight));
  else if (top < 0) scrollBy(0, Math.max(Math.floor(top), Math.ceil(end - innerHeight)));
}

// rowAsText is row y of the screen as text (the screen as text under it), its cells' bytes
// drawn as chars (glyph), without its trailing blanks: text, and a block character (128-159)
// or the checker (127) as a span of its own that draws it as the screen does, in the text's
// colour (console.css), its character, Unicode's sextant or ▒, kept for copying and for a
// screen reader, unseen. The page's font has no sextants: the text showed an empty box for
// each; and its ▒ left a thin line of the page between two rows of checkers.
function rowAsText(bytes, chars, y) {
  let end = chars.length;
  while (end > 0 && chars[end - 1] === " ") end--;
  const nodes = [];
  let text = "";
  for (let x = 0; x < end; x++) {
    if (!drawnAsBackground(bytes[x]) || chars[x] === " ") {
      text += chars[x];
      continue;
    }
    if (text) nodes.push(text);
    text = "";
    const span = document.createElement("span");
    span.className = "block";
    span.textContent = chars[x];
    span.style.background = cellBackground(bytes[x], "currentColor", "transparent", y);
    nodes.push(span);
  }
  if (text) nodes.push(text);
  return nodes;
}

// shownUnseen shows note (unseenNote) under the screen, or hides its line when it is "".
function shownUnseen(note) {
  $("unseen-rows").textContent = note;
  $("unseen-rows").hidden = note === "";
}

// touchPointer matches while the device's main pointer is a finger (a phone's, a tablet's
// touch screen), which scrolls a box by being drawn across it; a mouse scrolls it by its scroll
// bar (the wheel over a computer's screen is the computer's). The line over a wide screen
// (markWide) names the one the device has: a desktop's read "a finger drawn across it" too.
const touchPointer = window.matchMedia("(pointer: coarse)");

// markWide marks a screen wider than its box (a monitor's in a phone's window, below the
// smallest text), which scrolls sideways in it: a finger drawn sideways on it scrolls it
// (console.css), where on any other a finger's drag is the computer's alone. A line over it
// says so (wide-note; over it, as its bottom may be far below the window): a phone shows no
// scroll bar, and a monitor 164 characters across showed its first 55 as if they were all.
function markWide() {
  const screen = $("screen"), wide = screen.scrollWidth > screen.clientWidth;
  screen.classList.toggle("wide", wide);
  const how = touchPointer.matches ? "a finger drawn across it" : "its scroll bar";
  $("wide-note").textContent = wide ? (view && view.monitor ? "This monitor" : "This screen") + " is " + screen.dataset.width +
    " characters across, more than the window shows: scroll it sideways for the rest (" + how + ")." : "";
  $("wide-note").hidden = !wide;
}

// drawSoon draws view v's newest frame (data, its JSON as the stream sent it) at the browser's
// next animation frame, and none of those read before it: a computer redrawing faster than the
// tab draws (a slow phone; a tab in the background, which draws nothing until shown) has the
// frames in between skipped, as the gateway skips them for a slow viewer, where the page drew
// each frame it read, falling ever further behind the computer. The newest is always drawn.
// A stream's first frame is drawn at once (showLive): it ends the greyed screen, and a tab in
// the background would say its computer was away, in its title, until it was shown.
function drawSoon(v, data) {
  v.newest = data;
  if (v.live && !v.shownLive) {
    showLive(v);
    return;
  }
  if (v.drawing) return;
  v.drawing = true;
  requestAnimationFrame(() => {
    v.drawing = false;
    if (view !== v) return;
    draw(JSON.parse(v.newest));
  });
}

// showLive draws the first frame of view v's stream (v.newest): the screen shown is the
// computer's own now, no longer greyed, and the status says Live (liveWords) where it said
// the view waited for it, the tab's title the computer's traposId alone.
function showLive(v) {
  if (view !== v) return;
  // A view opened anew shows its screen and keys with the first frame, not as its stream
  // opened: an empty screen, a dark square, and keys that sent nothing showed until then.
  $("viewer").classList.remove("blank");
  const frame = JSON.parse(v.newest);
  nameMonitor(v, frame.monitor);
  draw(frame);
  v.shownLive = true;
  $("viewer").classList.remove("stale");
  if ([awaitingScreen, awaitingKeys].includes($("status").textContent)) status(liveWords(v));
  titled(v, "");
}

// nameMonitor names view v's monitor as the computer does (named: its stream's first frame's
// monitor, renameMonitor), and offers it in the picker once (offerScreens): the picker offered
// monitor top beside a link's monitor Top.
function nameMonitor(v, named) {
  if (!v.monitor) return;
  renameMonitor(v, named);
  if (v.monitorNamed) return;
  v.monitorNamed = true;
  if (v.monitors) offerScreens(v);
}

// renameMonitor gives view v's monitor the name named, as the computer has it: the monitor of
// a stream's first frame, or of its refusal (the gateway names the monitor it asked for, as it
// asks: a side named in another case in lower case, as CC reads a side; computer.MonitorName).
// An address typed by hand, #…/monitor/Top, shows the monitor top, and the view then says top,
// in its address (replaced: no step back to Top), heading and tab title (its caller's titled):
// it kept Top as typed, and a link's Left not attached showed "monitor Left (not attached)",
// and "monitor left" beside it once left was attached.
function renameMonitor(v, named) {
  if (view !== v || !v.monitor || typeof named !== "string" || named === "" || named === v.monitor) return;
  v.monitor = named;
  history.replaceState(null, "", screenHash(v.traposId, named));
  $("viewer-monitor").textContent = monitorHeading(named, 0); // a frame's draw adds its text scale
}

// awaitingScreen is the status while view v's stream is open and its first frame has not come:
// it said Live over the last session's screen, greyed, until then (a loaded computer's first
// frame may take a while).
const awaitingScreen = "Connected: waiting for the computer's screen";

// awaitingKeys is the status once a key press (a click, a paste) was not sent while view v
// awaits its computer's first frame (typable).
const awaitingKeys = awaitingScreen + ": keys typed on the greyed screen are not sent";

// typable says whether view v sends what is typed on its screen (send): its stream open and
// the screen shown the computer's own (v.shownLive). Between the stream opening and its first
// frame the screen is the last session's, greyed, and a person cannot see what it types: a
// press is not sent then, and the status says so. The release of what the computer got down
// still goes (send), as the stream opens (payOwed) or since: a computer that never draws must
// not hold a key down for ever.
function typable(v) {
  if (!v.live || v.shownLive) return v.live;
  if (view === v) status(awaitingKeys);
  return false;
}

// liveWords is the status of view v's stream with nothing else to say: Live once the screen
// shown is the computer's own (v.shownLive), awaitingScreen before.
// sentAsQReadMs is how long the status names characters sent as ? (outsideCC) before an
// answer that says nothing puts Live back: long enough to read them.
const sentAsQReadMs = 5000;

// now is the page's clock for how long words have been up (sentAsQReadMs) and a stream has
// shown the screen (shownAWhileMs): Date.now, which the page's tests move on (they wait on
// events, not the clock).
let now = () => Date.now();

function liveWords(v) {
  return v.shownLive ? "Live" : awaitingScreen;
}

// retryMs is how often the list asks for the computers again, and a view whose computer (or
// gateway) went away looks for it again.
const retryMs = 2000;
const waiting = " (waiting for it to come back)";
// tryingAgain follows a busy answer (429): the host's other requests fill the computer for
// the moment, and the answer says to retry shortly.
const tryingAgain = " (trying again)";
// connectionLost is the status while the gateway cannot be reached: stopped, or the network
// between is down (the browser's own words, "Failed to fetch", say neither).
const connectionLost = "The connection to the gateway was lost" + waiting;

// follow shows the computer's screen while view v is open: when the computer goes away or the
// gateway stops, it says so and watches again every retryMs (a busy computer: after the
// answer's Retry-After), so the view comes back with the computer. Each watch is preceded by
// asking what the owner allows (learnAccess), so a view-only screen shows as such from the
// start. A screen its owner keeps private is watched again on its own (lookAgain), and goes
// live once the owner allows it; so is one the computer refuses (watch's {refused}), or whose
// stream it ends itself before it has shown the screen for shownAWhileMs, the status saying
// when the page asks again: a computer that names a monitor and refuses its stream, or sends
// a frame and ends it, was asked again every retryMs for as long as the tab stayed open, by
// every tab. A stream that ends after it has shown the screen that long, and the computer or
// the gateway away, start the looks from the first again. The token's refusal ends it.
async function follow(v) {
  const signal = v.abort.signal;
  const backoff = { ms: 0 };
  while (!signal.aborted) {
    let again;
    try {
      // A monitor takes no keys: what the owner allows of them is not asked.
      if (!v.monitor) await learnAccess(v);
      await learnMonitors(v);
      again = await watch(v);
    } catch (e) {
      if (e.name === "AbortError" || e.message === "unauthorized") return;
      v.left = "";
      status(connectionLost);
      titled(v, "waiting");
      again = retryMs;
    }
    if (again === false || signal.aborted) return;
    if (typeof again === "string") { followRelabel(v, again); return; }
    if (again === keptPrivateMark) {
      await lookAgain(v, backoff);
      continue;
    }
    if (again.refused !== undefined) {
      if (view === v) status(again.refused + askingAgain(nextLookMs(backoff)));
      await lookAgain(v, backoff);
      continue;
    }
    backoff.ms = 0;
    await new Promise((resolve) => setTimeout(resolve, again));
  }
}

// lookFirstMs and lookMostMs bound how often a view looks again at what the owner of a
// private or view-only screen allows: after 2 s, doubling to every 30 s, while the page is
// shown, and at once when it regains the focus (the person back from the computer, where
// they changed the setting).
const lookFirstMs = 2000;
const lookMostMs = 30000;

// shownAWhileMs is how long a stream must have shown the screen for its computer's end of it
// (the owner withdrawing the screen) to be watched again after retryMs, the looks from the
// first: one it ends sooner (a broken or hostile client that sends a frame, then ends the
// stream) counts as a refusal, and follow backs off from it. As long as the longest look, a
// computer gets a watch from a tab at most about once in it.
const shownAWhileMs = lookMostMs;

// cameBack is whether the window regained the focus, or the page was shown again, since a
// view last looked at what the owner allows: one that came while a look was under way (asking
// the computer, or the watch it led to) makes the next look at once, not a backoff later.
let cameBack = false;
window.addEventListener("focus", () => { cameBack = true; });
document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") cameBack = true; });

// nextLookMs is the wait of backoff's next step ({ms}, the last wait; 0 before the first):
// lookFirstMs, then twice the last, up to lookMostMs.
function nextLookMs(backoff) {
  return backoff.ms ? Math.min(backoff.ms * 2, lookMostMs) : lookFirstMs;
}

// askingAgain ends the status of a view whose computer refused its screen (watch's {refused}):
// when the page asks again (ms, lookAgain's next wait), and that the person need not wait.
function askingAgain(ms) {
  return " (asking again in " + ms / 1000 + " s, and at once when you come back to this page or reload it)";
}

// lookAgain waits, for view v, until it is time to look again at what the owner allows, or at
// a screen its computer refused: the next step of backoff (nextLookMs), a hidden page waiting
// until it is shown; the window regaining the focus or the page being shown again, now or since
// the last look (cameBack), cuts the wait short. It resolves at once when the view closes.
function lookAgain(v, backoff) {
  backoff.ms = nextLookMs(backoff);
  const signal = v.abort.signal;
  if (cameBack && document.visibilityState === "visible") {
    cameBack = false;
    return Promise.resolve();
  }
  return new Promise((resolve) => {
    const done = () => {
      cameBack = false;
      clearTimeout(timer);
      window.removeEventListener("focus", done);
      document.removeEventListener("visibilitychange", shown);
      signal.removeEventListener("abort", done);
      resolve();
    };
    // Shown again: at once. Due while hidden: when shown (a hidden page looks at nothing).
    const shown = () => { if (document.visibilityState === "visible") done(); };
    const timer = setTimeout(shown, backoff.ms);
    window.addEventListener("focus", done);
    document.addEventListener("visibilitychange", shown);
    signal.addEventListener("abort", done);
  });
}

// infoTimeoutMs is how long asking computer.info may take: the watch waits for it.
const infoTimeoutMs = 5000;

// learnAccess asks view v's computer what its owner allows now (computer.info's allowed,
// docs/capabilities.md) and shows it: a view-only screen without the keys, Type, Paste and
// Terminate from the start (they stayed until the first key was refused), and with them again
// once the owner allows control. v.reports is whether the computer says (a client older than
// 0.5.15 does not: its view learns it from a refusal, as before). A computer not there, or a
// gateway away, is the watch's to say; the token's refusal and the view closing end follow.
async function learnAccess(v) {
  let info = null;
  try {
    const res = await api("/trapos/computers/" + encodeURIComponent(v.traposId) + "/requests", {
      method: "POST", headers: { "Content-Type": "application/json" }, signal: v.abort.signal,
      body: JSON.stringify({ type: "computer.info", payload: {}, timeoutMs: infoTimeoutMs }),
    });
    const body = res.ok ? await res.json() : null;
    info = body && body.ok ? body.payload : null;
  } catch (e) {
    if (e.name === "AbortError" || e.message === "unauthorized") throw e;
    return;
  }
  // A client from dragSince takes drags, and one from pressApartSince a press and its release
  // apart; an older one would refuse the whole call with them (the keys sent with them too),
  // so it gets what it takes: the press as a click, and the drags after it if it takes them.
  if (info) {
    v.drags = !olderVersion(info.clientVersion, dragSince);
    v.pressApart = !olderVersion(info.clientVersion, pressApartSince);
  }
  const allowed = info && info.allowed;
  if (view !== v || !allowed || typeof allowed.screen !== "string") return;
  v.reports = true;
  // view over a private note: the watch that follows goes live, or is refused again.
  if (allowed.screen === "view") viewOnly(v);
  else if (allowed.screen === "control" && $("viewer").classList.contains("view-only")) controlAllowed(v);
}

// controlAllowed gives view-only view v its controls back, once its computer says its owner
// allows control (learnAccess) or a key typed on the screen went through (sendInput). A key
// refused meanwhile said so: those words, which sent the player to the owner for what they
// now have, no longer hold. Other words (keys sent as ?) stay. Only learnAccess took them
// off: a key's release refused with the key and sent again (retryReleases) that went through
// first gave the controls back under the refusal's words, for good.
function controlAllowed(v) {
  note();
  if (v.said.startsWith("forbidden: ")) unsay(v, v.said);
}

// lookForControl looks again, while view v is view-only and its computer says what its owner
// allows, until the owner allows control (lookAgain's backoff); the view then gains its keys,
// Type, Paste and Terminate.
async function lookForControl(v) {
  if (v.lookingForControl || !v.reports) return;
  v.lookingForControl = true;
  const backoff = { ms: 0 };
  try {
    while (view === v && !v.abort.signal.aborted && $("viewer").classList.contains("view-only")) {
      await lookAgain(v, backoff);
      if (view !== v || v.abort.signal.aborted) return;
      await learnAccess(v);
    }
  } catch { // the view closed, or the token was refused: nothing to look at
  } finally {
    v.lookingForControl = false;
  }
}

// followRelabel opens the computer that view v's computer became when it was relabelled (its
// stream ended with the new traposId, relabelledTo), the same screen of it (a monitor's view,
// its monitor; it opened the computer's own screen): as the list shows it (its shown form,
// which the API takes back), once its hello under the new name is in the list in the account
// of the computer the view watched (v.accountId). An admin's list spans accounts, and another
// account's computer of that traposId is not this one; when several accounts have it once this
// one is back, the view opens it as ever, and says so as it does for any such traposId.
async function followRelabel(v, to) {
  const signal = v.abort.signal;
  while (!signal.aborted) {
    try {
      await v.learning;
      const res = await api("/trapos/computers", { signal });
      const c = res.ok && (await res.json()).find((c) => c.traposId === to &&
        (v.accountId === undefined || c.accountId === v.accountId));
      if (c) {
        // A monitor's view stays the monitor's: its computer's own screen is another view.
        if (!signal.aborted) location.hash = screenHash(c.shown || c.traposId, v.monitor);
        return;
      }
    } catch (e) {
      if (e.name === "AbortError" || e.message === "unauthorized") return;
    }
    await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
}

// learnAccount sets v.accountId to the account of the computer view v shows, as the list
// says once the view is live (a traposId is unique only inside an account); left unknown when
// the list cannot say (followRelabel then takes the first computer of the new traposId).
async function learnAccount(v) {
  try {
    const res = await api("/trapos/computers", { signal: v.abort.signal });
    if (!res.ok) return;
    const accounts = new Set((await res.json())
      .filter((c) => c.traposId === v.traposId || c.shown === v.traposId).map((c) => c.accountId));
    if (accounts.size === 1) v.accountId = [...accounts][0];
  } catch { // the view closed, or the gateway went away: its account stays unknown
  }
}

// keptPrivateMark is watch's report of a screen its owner keeps private: follow looks again.
const keptPrivateMark = Symbol("kept private");

// watch streams the computer's screen into the view until the stream ends; it reports when to
// watch again, in ms (retryMs: the computer or the gateway went away; a busy computer, whose
// host's other requests fill it for the moment: 429's Retry-After), the computer's new
// traposId when it was relabelled (followRelabel), keptPrivateMark (the owner keeps the screen
// private: look again later), {refused: the words to show} (the computer refused it, or ended
// its stream before it had shown the screen for shownAWhileMs (frames), or the gateway failed
// on its answer: look again later, follow saying when), or false, and says why in
// the status. 501 is
// neither: the computer is there but its client has no screen (older than it), which the
// message says how to fix; asking again every retryMs would not, and read "waiting". Nor is a
// traposId that several accounts have connected (an admin's token; the answer names the
// accounts): only another token picks one. v.live is set while the stream is open.
async function watch(v) {
  const sent = token;
  const res = await api("/trapos/computers/" + encodeURIComponent(v.traposId) + "/screen" +
    (v.monitor ? "?monitor=" + encodeURIComponent(v.monitor) : ""),
    { headers: { Accept: "text/event-stream" }, signal: v.abort.signal });
  if (!res.ok) {
    const body = await res.json().catch(() => null);
    const error = body && body.error;
    // A refusal of a monitor's view names the monitor as the gateway asked the computer for it:
    // a link's Left is left (renameMonitor), in the words below and once attached (followGone).
    if (error) renameMonitor(v, error.monitor);
    // A computer not connected since it left this view says why it left (v.left), not only
    // that it is not connected: the gateway's answer knows no more, and put its hints for a
    // computer named wrongly (another account's?) over "was cut off: its credential was
    // revoked; …" two seconds after the view said it. Any other answer is news of its own.
    if (!(res.status === 404 && error && error.code === "not_connected" && !error.accounts)) v.left = "";
    if (error && error.accounts) {
      // Without a token (loopback) there is no Log out: Log in with a token leads to the form.
      status(error.code + ": " + error.message + " (" + (token ? "Log out" : "Log in with a token") + " to give one of those tokens.)");
      titled(v, "not shown");
      return false;
    }
    if (error && error.relabelledTo) {
      // Relabelled a moment before the view opened (or looked again): the gateway names its
      // new traposId as it does to a stream it ends, and the view follows it there.
      status(error.code + ": " + error.message);
      titled(v, "waiting");
      return error.relabelledTo;
    }
    if (error && error.code === "forbidden") { // the owner keeps the screen private
      keptPrivate(v, error.message);
      return keptPrivateMark;
    }
    const busy = res.status === 429;
    const again = busy || res.status === 404 || (res.status >= 500 && res.status !== 501);
    // The computer's own refusal (refused: it answered the watch with an error, whatever its
    // code; a client that names a monitor it fails to watch), or the gateway's failure on a
    // computer that is connected (its watch unanswered in time, an answer that is none), is
    // given again when asked again: follow backs off from it. Only the computer away (or the
    // gateway stopping) and the gateway's busy come right by themselves, and are asked again
    // every retryMs and after Retry-After; an answer that is not the API's (a proxy's, the
    // gateway behind it restarting) is taken as the gateway away. The computer's words are
    // the status's text, as all its words are.
    if (again && error && (error.refused || !comeRight.has(error.code))) {
      titled(v, error.refused ? "refused" : "waiting");
      return { refused: error.code + ": " + inBrowser(error.message) };
    }
    // The page asks again by itself and says it waits: the gateway's words for such a caller
    // (waitingMessage, in its first minute) where it has some, not its word to ask again, for
    // which the player reloaded the page. An account with no computer linked (unlinked) has
    // none to wait for: the gateway's words say how to link one, and the page shows them as
    // they are (it still looks again, and shows the computer once linked and connected). Why
    // a computer left (v.left: cut off for its revoked credential, the account's last) is the
    // page's words for one it waits for, and keeps its waiting.
    const linkWords = !v.left && error && error.unlinked;
    // A link kept to a monitor the computer does not have (its answer: no monitor named "top"):
    // the page waits for it to be attached, and opens its view then (followGone). Such a
    // refusal names the monitor (error.monitor); one of a name no monitor can have (a character
    // CC cannot hold, which the gateway refuses unasked; over 64 bytes) names none: it never
    // gets attached, and the page said it waited for it, for good.
    const unattached = v.monitor && error && error.code === "bad_payload" && error.monitor && v.monitors && !v.monitors.includes(v.monitor);
    status((v.left || (error ? error.code + ": " + inBrowser(error.waitingMessage || error.message) : "The gateway answered " + res.status)) +
      (busy ? tryingAgain : again && !linkWords ? waiting : unattached ? waitingAttached : ""));
    titled(v, busy ? "busy" : again || unattached ? "waiting" : "not shown");
    if (unattached) followGone(v, notAttached);
    return busy ? retryAfterMs(res) : again && retryMs;
  }
  v.left = "";
  status(awaitingScreen); // Live once its first frame is drawn (showLive)
  if ($("viewer").classList.contains("private")) note(); // the owner shows it now
  live(v, true);
  v.opened++;
  payOwed(v);
  if (v.accountId === undefined && !v.learning) v.learning = learnAccount(v);
  try {
    return await frames(v, res.body, sent);
  } finally {
    live(v, false);
  }
}

// comeRight are the codes of the gateway's own refusals of a stream that come right by
// themselves (watch): the computer (or the gateway) away, and busy.
const comeRight = new Set(["not_connected", "busy"]);

// gatewayStopping is the gateway's message when it ends a stream as it stops
// (gateway.ErrShuttingDown, which a test of the package holds it to).
const gatewayStopping = "the gateway is shutting down";

// listedElsewhere is the gateway's not_connected hint of where the connected computers are
// listed (computer.ListedHint, which a test of the package holds it to): the CLI, MCP and the
// API, none of them the browser a person reads it in. inBrowser puts the page's own way to
// the list in its place.
const listedElsewhere = "; trap-sandbox computers lists the connected ones (MCP: list_computers; HTTP: GET /trapos/computers)";
const listedHere = "; Back to the list (below) shows the connected ones";

// inBrowser is the gateway's message as a person in this page acts on it.
function inBrowser(message) {
  return message.endsWith(listedElsewhere) ? message.slice(0, -listedElsewhere.length) + listedHere : message;
}

// keptPrivate shows view v's computer as its owner keeps it (sandbox.allow_screen none: the
// screen watch refused forbidden): no screen, no keys, Paste or Terminate (each refused
// too), but what the owner's setting is and how the owner shows it; the status has the
// computer's own words. follow looks again on its own, and shows the screen once it may.
function keptPrivate(v, message) {
  if (view !== v) return;
  status("forbidden: " + message);
  titled(v, "private");
  note("private", "The owner of this computer keeps its screen private (sandbox.allow_screen none): " +
    "nothing of it can be seen or typed on here. On the computer, the owner shows it with " +
    "set sandbox.allow_screen view (or control, to let it be typed on too); this page looks again " +
    "by itself, and at once when you come back to it.");
}

// viewOnly shows view v's computer as viewed, not controlled (sandbox.allow_screen view: as
// computer.info says, or its input refused forbidden): the screen stays, the keys, Type, Paste
// and Terminate go (each only refused); keys typed on the screen still go. Once the owner
// allows control they come back: when computer.info says so (lookForControl, for a computer
// that says), or when a key typed on the screen goes through.
function viewOnly(v) {
  // Already view-only (a key refused before computer.info answered), it is said again: the
  // computer may have said since what its owner allows, and then the view looks again.
  if (view !== v) return;
  note("view-only", "The owner of this computer lets its screen be viewed, not typed on " +
    "(sandbox.allow_screen view): keys, Paste and Terminate are refused. On the computer, the owner " +
    "allows them with set sandbox.allow_screen control" +
    (v.reports ? "; this page looks again by itself, and at once when you come back to it." : "."));
  lookForControl(v);
}

// note shows why the view lacks what it lacks (kind: the viewer's class, "private" or
// "view-only"), or, with none, that it lacks nothing.
function note(kind, text) {
  $("viewer").classList.remove("private", "view-only");
  if (kind) $("viewer").classList.add(kind);
  $("viewer-note").textContent = text || "";
  $("viewer-note").hidden = !kind;
}

// live sets whether view v's stream is open (v.live); while it is not, the screen it last
// drew is greyed (stale): it showed the dead computer's prompt, its cursor and all, as live.
// An open stream ungreys it with its first frame (showLive), not before: until then the screen
// shown is the computer's last session's (it came back, and has not sent its screen yet), not
// its own (v.shownLive stays false). A view opened anew stays blank (no screen, no keys) until
// that frame too.
function live(v, open) {
  v.live = open;
  v.shownLive = false;
  if (view !== v) return;
  if (!open) $("viewer").classList.add("stale");
}

// frames draws view v's live stream's frames until it ends, then says why (as watch reports),
// and keeps why the computer left (v.left: it disconnected, or was cut off) for the looks
// that wait for it; sent is the token the stream was opened with.
async function frames(v, body, sent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let shownAt; // when the stream's first frame came (now)
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (name === "frame") {
        if (shownAt === undefined) shownAt = now();
        drawSoon(v, data);
      }
      if (name === "end") {
        const error = JSON.parse(data).error || { code: "ended", message: "the gateway ended the stream" };
        if (error.code === "unauthorized") { // the token was revoked or expired meanwhile
          refused(sent, sent ? tokenRefusal(sent, error) : error.message);
          return false;
        }
        if (error.relabelledTo) { // the computer is back under its new name: the view follows it
          status(error.code + ": " + error.message);
          titled(v, "waiting");
          return error.relabelledTo;
        }
        const why = error.code + ": " + inBrowser(error.message);
        if (v.monitor && error.code === "not_found") { // the monitor was taken off: no watching it again
          status(why);
          titled(v, "not shown");
          followGone(v, "taken off");
          return false;
        }
        // The computer that ended the stream itself (refused) before it had shown the screen
        // for shownAWhileMs (before its first frame, or one frame and the end) ends it so
        // again when asked again, as one that refuses the watch does: follow backs off from
        // it, where every open tab asked it again every retryMs. One that ended it once it had
        // shown its screen a while (the owner withdrawing it) is watched again as before, the
        // looks from the first: the watch after it tells (the owner's forbidden, shown as
        // kept private).
        if (error.refused && !(shownAt !== undefined && now() - shownAt >= shownAWhileMs)) {
          v.left = "";
          titled(v, "refused");
          return { refused: why };
        }
        // The gateway stopping is not the computer leaving: the computer comes back with it.
        v.left = error.code === "not_connected" && error.message !== gatewayStopping ? why : "";
        status(why + waiting);
        titled(v, "waiting");
        return retryMs;
      }
    }
  }
  v.left = "";
  status(connectionLost); // no end event: the connection dropped, not the gateway's answer
  titled(v, "waiting");
  return retryMs;
}

// send queues screen.input events for view v's computer. While the view is not live (the
// computer or the gateway away, the screen shown its last one) they are dropped, not kept: the
// status already says why, and keys typed on a stale screen must not land on the computer when
// it is back; while its stream is open and its first frame has not come, the screen greyed
// still, the presses are dropped too, the releases of what is down sent (typable). Otherwise
// they wait in v.pending, in order, and go one call at a time (the
// computer takes a call's events before the next's): what is typed while one is on its way
// goes together in the next, up to inputEventsMax of the computer's events a call, so a fast
// typist or a held key, whose repeats come faster than a call's round trip, loses nothing (one
// request a key press fell behind, and past 64 waiting the keys were dropped unsaid). Events
// of one send that take more (a text put in the Type field at once) go alone in one call of
// the gateway's …/input, which types them whole: in as many of the computer's requests as they
// take, holding its input turn over them all, so no other caller's keys (an agent's send_keys)
// land between their parts, as they did when the page sent each part itself. A busy answer
// (429: the host's other requests fill the computer for the moment) is not the end of them:
// they go again after its Retry-After while the view stays live (v.busy), what is typed
// meanwhile waiting behind them, as behind a release tried again after a call that got no
// answer (v.retrying, retryReleases), up to keysWaiting key presses; past them a key press is
// not sent (a computer busy for long must not get a burst of stale keys, nor a gateway that
// does not answer a key held for as long) and the status says so (keysDropped). Keys typed
// faster than a call's round trip, with nothing refused, all go. A key let go (key_up) goes whenever the computer got its key
// down: it may be down there still; let go while the view is not live, it goes once the view is
// live again (owe). One the computer never got down is not sent (notStray). Those
// still waiting when the view closes (another opened, the token refused) are dropped, typed
// on a screen no longer shown, but for the releases, which go still (closeView). A text put in at once goes whole or in part: once one of its
// requests fails, the gateway sends none after it (the text would go on with a hole in it),
// and the status says what of it was not typed (partlyTyped).
function send(events) {
  const v = view;
  // A monitor takes no keys, clicks or paste (docs/screen.md, Monitors): nothing typed on its
  // view is sent.
  if (!v || events.length === 0 || v.monitor) return;
  if (!v.live) {
    owe(v, events);
    return;
  }
  if (!v.shownLive) { // the greyed screen (typable): only the releases of what is down go
    const down = events.filter((e) => releases.has(e.type) && v.pressed.has(pressID(e)));
    if (down.length < events.length) typable(v);
    if (down.length) queue(v, down);
    return;
  }
  const sent = events.filter(notStray(v));
  if (sent.length) queue(v, sent);
}

// notStray is the filter of events sent to view v's computer that drops the release of a key
// or mouse button it never got down: one pressed on the greyed screen (its press not sent) or
// before the view opened, let go once it is live. CC never sends a key_up without its key, nor
// a mouse_up without its mouse_click, and a program may take one as a press it missed. What it
// got down (v.pressed), or is pressed earlier among these events, is let go as ever.
function notStray(v) {
  const down = new Set(v.pressed);
  return (e) => {
    const id = pressID(e);
    if (!id) return true;
    if (!releases.has(e.type)) return !!down.add(id);
    return down.delete(id);
  };
}

// queue puts events on view v's way to its computer (send), its stream open. Events with a
// press past keysWaiting are dropped but for the releases among them of what the computer has
// down (a key tapped with the on-screen Ctrl lets Ctrl go: dropped with the key, Ctrl stayed
// down there for ever); a press dropped is not down (v.pressed), so its release is not sent.
function queue(v, events) {
  let press = events.some((e) => !releases.has(e.type));
  if (press && (v.busy || v.retrying) && v.presses >= keysWaiting) {
    v.dropped = true;
    status(keysDropped(v));
    events = events.filter((e) => releases.has(e.type) && v.pressed.has(pressID(e)));
    if (!events.length) return;
    press = false;
  }
  for (const e of events) {
    const id = pressID(e);
    if (id && releases.has(e.type)) v.pressed.delete(id);
    else if (id) v.pressed.add(id);
  }
  if (press) v.presses++;
  const text = events.reduce((sum, e) => sum + inputCost(e), 0) > inputEventsMax; // typed in parts
  v.sends++;
  v.pending.push({ events, press, text, sent: v.sends });
  if (!v.sending) v.queue = sendPending(v);
}

// pressID names what event e holds down on the computer, or lets go there: a key (key,
// key_up) or a mouse button (mouse_click, mouse_up); none for the rest (a click lets its
// button go at once).
function pressID(e) {
  if (e.type === "key" || e.type === "key_up") return "key " + e.name;
  if (e.type === "mouse_click" || e.type === "mouse_up") return "mouse " + e.button;
  return "";
}

// owe keeps, of events sent while view v is not live, the releases of the keys and buttons
// the computer got down while it was (v.pressed), for payOwed to send once it is live again;
// the rest are dropped (send). Dropped too, a drag, or a key held as the stream ended,
// stayed down on the computer for ever: its program (paint mid-stroke, a game holding Ctrl)
// never got the release, the gateway restarting or the computer reconnecting under it. A
// release of a key pressed only on the stale screen is dropped with its press: the computer
// never got the key.
function owe(v, events) {
  for (const e of events) {
    const id = pressID(e);
    if (releases.has(e.type) && v.pressed.delete(id)) v.owed.push(e);
  }
}

// oweAgain owes (owe) the releases among events, a call of view v's sent while its stream
// opened had been (v.opened) that found the computer or the gateway gone (not_connected, or no
// answer at all): let go as the stream was ending, before the view knew, they would be lost as
// dropped ones were. They go once the stream opens again: at once if it has since, not while
// the stream is still the one of the computer gone, where they would fail again, and again.
// One pressed again since is left to that press's own release.
function oweAgain(v, events, opened) {
  for (const e of events) {
    const id = pressID(e);
    if (releases.has(e.type) && !v.pressed.has(id)) {
      v.pressed.add(id);
      owe(v, [e]);
    }
  }
  if (v.live && v.opened !== opened) payOwed(v);
}

// payOwed sends view v's owed releases (owe) as its stream opens again, before anything typed
// since. The computer may have rebooted meanwhile, the key or button no longer down on it: a
// release of one not down is harmless in CC, only an event (key_up, mouse_up) that a program
// which never saw the press has nothing to end with; CC keeps no state of what is down that
// it could upset.
function payOwed(v) {
  if (view !== v || !v.live || !v.owed.length) return;
  queue(v, v.owed.splice(0)); // over a greyed screen too (typable)
}

// closeView ends view v (stop: another computer opened, the list shown, the token refused, a
// log out). What its computer got down from it and has not had let go (v.pressed: a key or the
// mouse button still held, the on-screen Ctrl, a key held on its button), and the releases it
// had not sent yet (waiting their turn, owed, or on their way as the computer went), are let go
// on that computer (letGoClosed): dropped with the view, they stayed down there for ever (paint
// mid-stroke, a game holding Ctrl). The page follows those keys and that button no further, as
// when the window loses the focus; their release on the page, later, is no longer this view's.
function closeView(v) {
  const held = [...v.pressed].map((id) => releaseOf(v, id)).filter(Boolean);
  v.pressed.clear();
  v.down.clear();
  v.held = null;
  v.ctrl = false;
  v.abort.abort();
  if (v.opened) letGoClosed(v, held, token);
}

// releaseOf is the event that lets go, on view v's computer, what pressID id names: a key's
// key_up, or the held button's mouse_up where the pointer last was on the screen.
function releaseOf(v, id) {
  const [kind, name] = [id.slice(0, id.indexOf(" ")), id.slice(id.indexOf(" ") + 1)];
  if (kind === "key") return { type: "key_up", name };
  if (v.held && String(v.held.button) === name) return { type: "mouse_up", button: v.held.button, x: v.held.x, y: v.held.y };
  return null;
}

// letGoWithinMs bounds how long releases are tried again on their computer: a closed view's,
// sent on their own (letGo, closeView), while it is away (rebooting, reconnecting), a gateway
// restarts, or a token is refused until the tab is given another; and a live view's whose call
// got no answer, at the head of its queue (retryReleases).
const letGoWithinMs = 60000;

// letGoClosed sends the releases of closed view v (its computer's, held: what was still down)
// by letGo, the first call with the token the view was closed with (sent), for at most
// letGoWithinMs. The view's call on its way answers first: its releases that found the
// computer gone are owed then (oweAgain), and one it delivered is not sent again. Meanwhile
// they are closing's: a page left before that call answered sends them then (leavePage),
// where they waited for an answer the gone page never got, and the computer held the key down.
async function letGoClosed(v, held, sent) {
  const until = Date.now() + letGoWithinMs, waiting = { v, held, sent };
  closing.add(waiting);
  await Promise.race([v.queue, new Promise((resolve) => setTimeout(resolve, letGoWithinMs))]);
  if (!closing.delete(waiting)) return; // the page was left meanwhile: they went then
  await letGo(v, closedReleases(v, held), sent, until);
}

// closing are the closed views whose releases wait for their call on its way (letGoClosed).
const closing = new Set();

// closedReleases are the releases closed view v has yet to send: those owed, those waiting
// their turn in its queue, and held (what was still down as it closed).
function closedReleases(v, held) {
  return [...v.owed.splice(0), ...v.pending.splice(0).flatMap((p) => p.events).filter((e) => releases.has(e.type)), ...held];
}

// letGo is the one home of sending releases (events) to view v's computer on their own, apart
// from the view's queue: in one call, the first with token sent, then with the one the tab
// holds, again every retryMs (a busy answer: its Retry-After) while the computer or the gateway
// is away or the computer busy, until the time until (a Date.now()). A token the gateway
// refused is not sent again: the call waits for the tab's next login (loggedIn). Nothing of it
// is shown. Its calls outlive the page (keepalive), whose last word they may be, within the
// page's budget of them and its reserve for releases (fetchOutliving). A closed
// view's releases (letGoClosed) and a left page's (letGoLeaving) go by it: a live view's go on
// its queue, in order (retryReleases). after names the view's call still on its way, if any
// (v.inFlight), which the gateway types first (…/input's after): a page left goes no further
// with its queue, and its releases go beside that call.
async function letGo(v, events, sent, until, after) {
  const refusedTokens = new Set();
  const left = () => Math.max(until - Date.now(), 0);
  for (let auth = sent; events.length && Date.now() < until;) {
    let wait = retryMs;
    try {
      const res = await fetchOutliving("/trapos/computers/" + encodeURIComponent(v.traposId) + "/input", {
        method: "POST", headers: headers(auth, { "Content-Type": "application/json" }), keepalive: true,
        body: JSON.stringify(after ? { events, after, timeoutMs: inputTimeoutMs } : { events }),
        signal: AbortSignal.timeout(Math.max(until - Date.now(), 1)),
      }, true);
      const body = await res.json().catch(() => null);
      const code = body && body.error && body.error.code;
      if (res.status === 401 || code === "unauthorized") refusedTokens.add(auth);
      else if (res.status < 500 && !letGoAgain.has(code)) return; // taken, or refused for good (the owner's setting)
      if (res.status === 429) wait = retryAfterMs(res);
    } catch { // no answer: the gateway away, or the time is up
    }
    if (refusedTokens.has(token)) await loggedIn(left());
    else await new Promise((resolve) => setTimeout(resolve, Math.min(wait, left())));
    auth = token;
  }
}

// logins are the waits for the tab's next login (loggedIn), which the token form ends.
const logins = [];

// loggedIn resolves once the token form is sent (the tab's token is the one given there), or
// after ms.
function loggedIn(ms) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    logins.push(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

// letGoAgain are the error codes after which a closed view's releases are tried again: the
// computer or the gateway away, its answer late, the computer busy (a token refused waits for
// the next login).
const letGoAgain = new Set(["not_connected", "timeout", "busy"]);

// sendPending sends view v's pending events, as many as a request takes at a time, until none
// waits (send starts it again for the next; v.queue is its latest run, settled once it ends).
async function sendPending(v) {
  v.sending = true;
  try {
    while (v.pending.length && !v.abort.signal.aborted) {
      let n = 0, cost = 0;
      for (; n < v.pending.length; n++) {
        const c = v.pending[n].events.reduce((sum, e) => sum + inputCost(e), 0);
        if (n > 0 && cost + c > inputEventsMax) break;
        cost += c;
      }
      const taken = v.pending.splice(0, n);
      let failed;
      const events = taken.flatMap((p) => p.events), opened = v.opened;
      try {
        failed = await sendInput(v, events, Math.max(...taken.map((p) => p.sent)));
      } catch (e) {
        if (e.message === "unauthorized") return;
        failed = { said: "Input failed: " + e.message, queued: 0, away: true, unanswered: true };
        say(v, failed.said);
      } finally {
        v.presses -= taken.filter((p) => p.press).length;
      }
      const retried = taken.find((p) => p.retry);
      if (!failed && retried && retried.retry.words) unsay(v, retried.retry.words);
      // A call that got no answer (the network) while the stream stays open: its releases owed
      // would wait for a reopen that may never come, then go late as a stray key_up.
      if (failed && failed.unanswered && v.live && v.opened === opened) await retryReleases(v, taken, failed);
      else if (failed && failed.away) oweAgain(v, events, opened);
      if (failed && failed.said) partlyTyped(v, taken, failed);
      v.retrying = v.pending.length > 0 && !!v.pending[0].retry;
    }
  } finally {
    v.sending = false;
  }
}

// retryReleases puts the releases of view v's pending sends taken, whose call got no answer
// (failed) while the stream stays open, back at the head of v.pending: they go first in the
// next call, at once, with what was typed since behind them, so the computer gets every key in
// the order the player made it. Tried on their own beside the queue (letGo), they went after
// keys typed later: press a, press b, release a; or a release after the same key pressed
// again. A retry that got no answer either waits retryMs before the next (the view closing
// ends the wait: letGoClosed takes them), for up to letGoWithinMs since the first call. A
// call of releases alone lost nothing once they went: its "Input failed" gives way to Live
// then (words). The keys among them are not tried again: the call may have typed them.
async function retryReleases(v, taken, failed) {
  const events = taken.flatMap((p) => p.events), again = events.filter((e) => releases.has(e.type));
  const before = taken.find((p) => p.retry);
  const until = before ? before.retry.until : Date.now() + letGoWithinMs;
  if (!again.length || Date.now() >= until) return;
  const words = again.length === events.length ? failed.said : "";
  v.pending.unshift({ events: again, press: false, text: false, sent: Math.max(...taken.map((p) => p.sent)), retry: { until, words } });
  v.retrying = true;
  if (before) await closedOr(v, Math.min(retryMs, until - Date.now()));
}

// closedOr resolves after ms, or at once when view v closes.
function closedOr(v, ms) {
  return new Promise((resolve) => {
    const signal = v.abort.signal;
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

// sendInput posts events for view v to the gateway's …/input (one call, however many of the
// computer's requests they take), again after each busy answer that typed none of them while
// the view stays live, and says in the status what the gateway answered; it reports the
// error's words and how many of the events' queue the computer took before it (queued), if
// the gateway refused them (gone: the view went away before they were sent). newest is the
// latest send whose events went.
async function sendInput(v, events, newest) {
  const cost = events.reduce((sum, e) => sum + inputCost(e), 0);
  for (let busy = false; ; busy = true) {
    if (v.abort.signal.aborted) return gone;
    // A text of some 100 requests is given the longest a call may take: the computer of a
    // loaded server answers each in a tick or more.
    const name = callName();
    const call = JSON.stringify(cost > inputEventsMax ? { events, timeoutMs: inputTimeoutMs, call: name } : { events, call: name });
    v.inFlight = name;
    const res = await api("/trapos/computers/" + encodeURIComponent(v.traposId) + "/input", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: call, keepalive: true,
    }).finally(() => { v.inFlight = ""; });
    const body = await res.json().catch(() => null);
    const error = body && body.error;
    if (res.status === 429 && !(error && error.queued) && v.live && !v.abort.signal.aborted) {
      v.busy = true;
      status(v.dropped ? keysDropped(v) : (error ? error.code + ": " + error.message : "The gateway answered 429") + sendingAgain);
      await new Promise((resolve) => setTimeout(resolve, retryAfterMs(res)));
      if (!v.live || v.abort.signal.aborted) return gone; // the view went away meanwhile: not sent
      continue;
    }
    const outside = [...new Set(((body && body.warnings) || []).map((w) => w.char).filter(Boolean))];
    // What the answer said stays until a later answer to keys typed since says nothing (it
    // said "Sent as ?: €" for the rest of the view, past every key typed after the €; and the
    // answer to keys typed before a text's part failed put Live over it).
    // Characters sent as "?" go on being named with those of keys sent since, until an answer
    // says nothing (v.sentAsQ): typed in two calls, € then 😀, the status named 😀 alone.
    const named = view === v && v.said && $("status").textContent === v.said ? v.sentAsQ : [];
    const sentAsQ = error ? [] : [...new Set([...named, ...outside])];
    // Up less than sentAsQReadMs, the words stay over an answer that says nothing: typed on
    // at once (5€ then Enter), Enter's answer put Live over them before they could be read.
    const held = !error && !outside.length && named.length > 0 && now() - v.sentAsQAt < sentAsQReadMs;
    v.sentAsQ = outside.length || held ? sentAsQ : [];
    if (outside.length) v.sentAsQAt = now();
    let said = error ? error.code + ": " + error.message : outside.length ? outsideCC(sentAsQ.join("")) : "";
    // A paste this call sent said what it left out, which its answer's words do not replace.
    if (v.pasted && v.pasted.sent <= newest) {
      if (said) said += " " + v.pasted.words;
      v.pasted = null;
    }
    if (error && error.code === "forbidden") viewOnly(v);
    else if (!error && view === v && $("viewer").classList.contains("view-only")) controlAllowed(v); // the owner allowed control since
    if (said) say(v, said);
    else if (held && !busy && !v.dropped) { /* still read: Live at an answer once they are not */ }
    else if (view === v && v.live && (busy || v.dropped || (v.said && $("status").textContent === v.said && newest > v.saidAt))) {
      status(liveWords(v));
      v.said = "";
    }
    v.busy = false;
    if (!error) v.dropped = false;
    return error ? { said, queued: error.queued || 0, away: error.code === "not_connected" } : null;
  }
}

// keepaliveMaxBytes bounds the body of an input call that outlives its page (fetch's
// keepalive: the browser completes it after the tab closed or navigated away, with its headers,
// the token and Content-Type, so it passes the API's guard as any call does). A larger call (a
// text put in at once) is the page's alone; a call of releases (letGo) is a few hundred bytes.
const keepaliveMaxBytes = 16384;

// keepaliveBudgetBytes is what a browser lets a page have of keepalive calls' bodies in flight
// at once (64 KiB): it refuses the call past it, and the keys in it were lost ("Input failed"),
// as were the releases sent as the page is left, once a few views closed with their texts'
// calls still on their way (a call is not aborted with its view, and takes up to a minute).
// releasesReserveBytes of it are the releases' (letGo) alone, so the view's calls never leave
// them no room.
const keepaliveBudgetBytes = 65536;
const releasesReserveBytes = 8192;

// keepaliveBytes is the bodies of the page's keepalive calls in flight (fetchOutliving).
let keepaliveBytes = 0;

// fetchOutliving is fetch, whose call outlives its page (keepalive) when options ask it and
// its body fits: at most keepaliveMaxBytes, and within what the page's keepalive calls in
// flight leave of keepaliveBudgetBytes, less releasesReserveBytes unless the call carries
// releases (reserve). One that does not fit goes as a call of the page's own, which the
// browser may cancel with it, rather than be refused. The one home of keepalive and of
// keepaliveBytes: a call counts until its answer is read whole, as the browser counts it.
async function fetchOutliving(url, options, reserve) {
  const size = options.keepalive ? new TextEncoder().encode(options.body || "").length : 0;
  const room = keepaliveBudgetBytes - (reserve ? 0 : releasesReserveBytes) - keepaliveBytes;
  if (!options.keepalive || size > keepaliveMaxBytes || size > room) return fetch(url, Object.assign({}, options, { keepalive: false }));
  keepaliveBytes += size;
  try {
    const res = await fetch(url, options);
    await res.clone().arrayBuffer().catch(() => null);
    return res;
  } finally {
    keepaliveBytes -= size;
  }
}

// letGoLeaving lets go, as the page is left (pagehide: its tab closed, another page opened in
// it, the browser quit), what view v's computer got down from it: the keyboard's keys, the
// mouse button, the on-screen Ctrl or a key held on its button (v.pressed), and the releases
// waiting their turn behind a call on its way or owed. Each goes at once by a call that
// outlives the page (keepalive): one that goes later, or whose page is gone, the browser
// cancels with it, and the computer held Ctrl down for ever. The call on its way, if any,
// outlives the page as well; the releases go beside it, no longer behind it (no later turn
// comes), named after it (v.inFlight), so the gateway types them once it has typed that call:
// sent as they were, a release of a key whose press was in that very call reached the
// computer first when it reached the gateway first, and the key stayed down.
function letGoLeaving(v) {
  letKeysGo(v);
  letMouseGo(v);
  const held = [...v.pressed].map((id) => releaseOf(v, id)).filter(Boolean);
  v.pressed.clear();
  holdCtrl(v, false);
  const events = closedReleases(v, held);
  v.presses = 0;
  if (events.length) letGo(v, events, token, Date.now() + letGoWithinMs, v.inFlight);
}

// leavePage lets go, as the page is left, what the computers got down from it: the view
// shown's (letGoLeaving), and the closed views' whose releases wait for their call on its way
// (closing), each after that call.
function leavePage() {
  if (view) letGoLeaving(view);
  for (const waiting of closing) {
    closing.delete(waiting);
    const events = closedReleases(waiting.v, waiting.held);
    if (events.length) letGo(waiting.v, events, waiting.sent, Date.now() + letGoWithinMs, waiting.v.inFlight);
  }
}

// pageName names this page's input calls (…/input's call: callName), so that a call can be
// typed after one of them; random, so that no other page's names are the same.
const pageName = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
let calls = 0;

// callName is the name of this page's next input call.
function callName() {
  return pageName + "." + ++calls;
}

// gone is sendInput's answer when the view went away (not live, or closed) before its events
// were sent, a busy answer's wait under way: none was typed, and the releases among them are
// owed (oweAgain), not lost with the presses.
const gone = { said: "", queued: 0, away: true };

// inputTimeoutMs is the timeoutMs of a call that types a text of several of the computer's
// requests: the most the gateway grants (docs/http-api.md).
const inputTimeoutMs = 60000;

// say shows words about view v's keys in the status (v.said) until the answer to keys sent
// after them says nothing (then Live), while v is the view shown.
function say(v, words) {
  v.said = words;
  v.saidAt = v.sends;
  if (view === v) status(words); // a closed view's call answering late is no keys of the view shown
}

// unsay puts Live back over words (say) about view v's keys that no longer hold, unless other
// words, or another view, have been shown since.
function unsay(v, words) {
  if (view !== v || !v.live || v.said !== words || $("status").textContent !== words) return;
  status(liveWords(v));
  v.said = "";
}

// partlyTyped follows a call of view v's that failed (failed: its words, said, and how many of
// its events' queue the computer took before, queued), taken its pending sends: a text put in
// at once (alone in its call) was typed no further than queued, and the status says how much
// of it was not typed, until keys typed since go through. Before, its next part went on, and
// its answer put Live over the error: the player never learnt that a middle part of the text
// was missing.
function partlyTyped(v, taken, failed) {
  const text = taken.find((p) => p.text);
  if (!text) return;
  const all = charactersIn(text.events);
  const chars = all - charactersIn(typedPart(text.events, failed.queued));
  say(v, failed.said + ": the text put in at once was typed only in part, its last " + chars + " of " + all +
    " characters not (type them again once it says Live).");
}

// charactersIn is how many characters events type: a char's each, and Enter and Tab pressed
// (a text's line break and tab, as the Type field sends them).
function charactersIn(events) {
  return events.reduce((n, e) => n + (e.type === "char" ? ccCharacters(e.text).length :
    e.type === "key" && !e.held && (e.name === "enter" || e.name === "tab") ? 1 : 0), 0);
}

// typedPart is the events of events that queued fills (the computer's queue the gateway says
// it took before a failed request: its requests are cut as computer.InputRequests cuts them, a
// char's text between its characters, ccCharacters), which a test of tests/e2e holds to the
// gateway's cuts. A char's text typed is given composed, as the computer got it.
function typedPart(events, queued) {
  const typed = [];
  for (const e of events) {
    if (e.type === "char") {
      const chars = [], all = ccCharacters(e.text);
      for (const ch of all) {
        const c = ch === "\n" ? 2 : 1;
        if (c > queued) break;
        chars.push(ch);
        queued -= c;
      }
      if (chars.length) typed.push(Object.assign({}, e, { text: chars.join("") }));
      if (chars.length < all.length) break;
      continue;
    }
    const c = inputCost(e);
    if (c > queued) break;
    typed.push(e);
    queued -= c;
  }
  return typed;
}

// inputCost is how many events of the computer's queue e takes: a char's characters each
// (ccCharacters; a line break two: key enter and key_up enter), a click two, any other one (a
// drag too). It is the gateway's computer.InputCost, which a test of tests/e2e holds it to on
// one table of events.
function inputCost(e) {
  const text = e.text || "";
  if (e.type === "char") return ccCharacters(text).length + (text.match(/\n/g) || []).length;
  return e.type === "click" ? 2 : 1;
}

// ccText is text as the text rule reads it (docs/protocol.md), the one way the page reads
// what it types or counts: composed (Unicode's NFC), as the gateway reads host text before it
// counts, cuts and sends it (cctext.Composed): é written as e and U+0301 (a Mac's text,
// dictation, some keyboards and pastes) is one character, the byte E9, which the page counted
// two, and typed as e and "?". ccCharacters is its characters.
function ccText(text) {
  return (text || "").normalize("NFC");
}
function ccCharacters(text) {
  return [...ccText(text)];
}

// untypable matches a character up to U+00FF that CC's keyboard does not type: a control
// character (C0, DEL and C1: 0-31, 127-159). CC's game client types 32-126 and 160-255 as a
// char (its TerminalWidget.charTyped), the no-break space (160) and the soft hyphen (173)
// too, as fakecraft shell and trap-sandbox screen do. The one home of that rule, for the
// keyboard on the screen and the Type field alike. Characters past U+00FF are the gateway's
// to send as "?" (the Type field's), or not sent (a key's: CC has no char for them).
const untypable = /[\u0000-\u001f\u007f-\u009f]/;

// unpastable matches a character up to U+00FF that CC's paste makes "?" (its clipboard rule,
// normaliseClipboardString): the keyboard's untypable ones, and the no-break space and the soft
// hyphen, which its keyboard types.
const unpastable = new RegExp(untypable.source + "|[\u00a0\u00ad]", "g");

// pasteMax is the most characters CC pastes.
const pasteMax = 512;

// pasteLine is text as CC pastes it (its clipboard rule): up to the first line break (\r or
// \n), at most pasteMax characters (UTF-16 units, as CC counts), a control character (the
// tab of copied code; the computer refused the whole paste for it), DEL, 128-160 and the soft
// hyphen each as "?". Characters past U+00FF stay: the gateway sends them as "?" and says so
// (outsideCC). more is how many further lines with text were left out, cut whether the line
// was longer.
function pasteLine(text) {
  const lines = text.split(/\r\n|\r|\n/);
  return {
    line: lines[0].slice(0, pasteMax).replace(unpastable, "?"),
    more: lines.slice(1).filter((l) => l !== "").length,
    cut: lines[0].length > pasteMax,
  };
}

// paste sends text to the computer as CC pastes it (pasteLine), and says what was left out,
// with what the Paste field left out of it when it was pasted there (leftOut: {more, cut}).
// The words go on until keys sent after it go through (say), and after the gateway's words on
// the paste itself (its characters sent as ?: sendInput keeps them, v.pasted).
function paste(text, leftOut) {
  const p = pasteLine(text), v = view;
  if (leftOut) {
    p.more += leftOut.more;
    p.cut = p.cut || leftOut.cut;
  }
  if (p.line) send([{ type: "paste", text: p.line }]);
  if (!v || !v.live || !v.shownLive || (!p.more && !p.cut)) return;
  const words = "Pasted " + (p.cut ? "the first " + pasteMax + " characters of " : "") + "the first line only, as CC does" +
    (p.more ? " (" + p.more + (p.more === 1 ? " more line" : " more lines") + " not sent)." : ".");
  say(v, words);
  if (p.line) v.pasted = { words, sent: v.sends };
}

// outsideCC is the status for characters the gateway sent as "?" (its warnings): beyond
// U+00FF, CC's character set (a paste of "日本" reached the computer as "??", unexplained).
function outsideCC(chars) {
  return "Sent as ?: " + chars + " (a computer types characters up to U+00FF only)";
}

// releases are the events that let go of a key or a mouse button down on the computer: they
// always go, however many presses wait (send).
const releases = new Set(["key_up", "mouse_up"]);

// keysWaiting bounds the key presses (and pastes, clicks…) of a view that wait to be sent (send)
// for a busy computer, or behind a release tried again: the one home of that cap.
const keysWaiting = 256;
// keysDropped is the status of view v when a key press is not sent: keysWaiting wait already,
// for the busy computer (v.busy) or behind a release tried again (v.retrying).
function keysDropped(v) {
  return "Keys not sent: " + keysWaiting + (v.busy ? " wait for the busy computer." : " wait for the gateway to take the keys before them.") +
    " Type them again once it says Live.";
}
// sendingAgain follows a busy answer to typed keys.
const sendingAgain = " (sending the keys again)";

// retryAfterMs is a busy answer's Retry-After in milliseconds: 1 s when it has none, at most
// a minute (past 2^31 ms a browser's setTimeout fires at once, which would send in a loop).
function retryAfterMs(res) {
  const seconds = parseInt(res.headers.get("Retry-After"), 10);
  return Math.min(seconds > 0 ? seconds : 1, 60) * 1000;
}

// keyName is CC's name (keys.getName) of a browser key, by its place on the keyboard.
const named = {
  Enter: "enter", NumpadEnter: "numPadEnter", Backspace: "backspace", Tab: "tab", Space: "space",
  ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right", Home: "home", End: "end",
  PageUp: "pageUp", PageDown: "pageDown", Insert: "insert", Delete: "delete",
  ControlLeft: "leftCtrl", ControlRight: "rightCtrl", ShiftLeft: "leftShift", ShiftRight: "rightShift",
  AltLeft: "leftAlt", AltRight: "rightAlt", CapsLock: "capsLock", Minus: "minus", Equal: "equals",
  BracketLeft: "leftBracket", BracketRight: "rightBracket", Backslash: "backslash", Semicolon: "semicolon",
  Quote: "apostrophe", Comma: "comma", Period: "period", Slash: "slash", Backquote: "grave",
  NumpadDecimal: "numPadDecimal", NumpadDivide: "numPadDivide", NumpadMultiply: "numPadMultiply",
  NumpadSubtract: "numPadSubtract", NumpadAdd: "numPadAdd", NumpadEqual: "numPadEqual",
  NumLock: "numLock", ScrollLock: "scrollLock", Pause: "pause", PrintScreen: "printScreen",
  ContextMenu: "menu",
};
const digits = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"];
function keyName(code) {
  if (/^Key[A-Z]$/.test(code)) return code.slice(3).toLowerCase();
  if (/^Digit[0-9]$/.test(code)) return digits[+code.slice(5)];
  if (/^Numpad[0-9]$/.test(code)) return "numPad" + code.slice(6);
  if (/^F([1-9]|1[0-9]|2[0-5])$/.test(code)) return code.toLowerCase();
  return named[code];
}

// ---- keys: what the computer gets for a key (the one home of that rule, for the keyboard, the
// on-screen keys and the Type field alike)

// keyEvents is what CC gets for key name going down (its key event, held when it repeats,
// then the character it types, if any, as char) or up (key_up). A character no key of its own
// types (é on a phone) has no name: its char alone, as CC sends one it has no key code for.
function keyEvents(name, text, up, held) {
  const events = [];
  if (name) events.push(up ? { type: "key_up", name } : { type: "key", name, held: !!held });
  if (!up && text) events.push({ type: "char", text });
  return events;
}

// pressEvents is a key pressed and let go (an on-screen key, a character typed in the Type
// field). With Ctrl held (ctrl: tapped before it) the key goes with Ctrl down and types no
// character, as a keyboard's Ctrl+S reaches CC (key s, no char), and Ctrl is let go after it.
function pressEvents(name, text, ctrl) {
  const events = [...keyEvents(name, ctrl ? "" : text, false), ...keyEvents(name, "", true)];
  if (ctrl) events.push(...keyEvents("leftCtrl", "", true));
  return events;
}

// charKey is CC's name of the key that types character ch on a US keyboard (Shift is not
// pressed for its upper row), or undefined for one it has no key for (é, 日: char alone).
const punctuation = { "`": "Backquote", "-": "Minus", "=": "Equal", "[": "BracketLeft", "]": "BracketRight",
  "\\": "Backslash", ";": "Semicolon", "'": "Quote", ",": "Comma", ".": "Period", "/": "Slash", " ": "Space" };
const shifted = { "~": "`", "!": "1", "@": "2", "#": "3", "$": "4", "%": "5", "^": "6", "&": "7", "*": "8", "(": "9",
  ")": "0", "_": "-", "+": "=", "{": "[", "}": "]", "|": "\\", ":": ";", '"': "'", "<": ",", ">": ".", "?": "/" };
function charKey(ch) {
  const c = shifted[ch] || ch;
  if (/^[a-zA-Z]$/.test(c)) return c.toLowerCase();
  if (/^[0-9]$/.test(c)) return digits[+c];
  return named[punctuation[c]];
}

// onKey sends a key going down or up on the screen (up), and the character it types, if any:
// the keyboard's one way in for keys, typed where the screen's field has the focus
// (screen-keys). A key an input method takes (it composes 日本 from keys, or é from a dead key
// and e) is the method's: it types nothing here, and its text comes whole once composed
// (onComposed). A dead key goes as its key (CC gets one for it), and is left to compose.
function onKey(e, up) {
  if (e.key === "Escape") {
    // Esc leaves the screen, as it leaves a computer's screen in game (CC never gets the key):
    // the keys down are let go (blur) and Tab moves on to the page, which a keyboard alone
    // could not leave otherwise (the screen takes Tab).
    e.preventDefault();
    if (!up) {
      $("screen-keys").blur();
      $("screen").blur();
    }
    return;
  }
  const name = keyName(e.code);
  const v = view;
  const method = e.isComposing || e.key === "Process" || e.keyCode === 229; // the input method's key
  if (method && !up) {
    if (v && name) v.unsent.add(name);
    return;
  }
  // Its key_up is the method's too (CC got no key for it), but a key down on the computer (the
  // dead key, let go while it composes) is let go there.
  if (up && (!v ? method : v.unsent.delete(name) || (method && !v.down.has(name)))) return;
  const dead = e.key === "Dead";
  // Ctrl+V (⌘V on a Mac) is the browser's paste, which the screen sends as CC pastes (paste):
  // its v is no key of the computer's. Its keydown prevented, the browser pasted nothing: the
  // computer got Ctrl and v, not the clipboard.
  if (!up && name === "v" && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && !e.getModifierState("AltGraph")) {
    if (v) v.unsent.add(name);
    return;
  }
  // The on-screen Ctrl held: this key goes with it, and lets it go when it is let go.
  const withCtrl = !up && v && v.ctrl === true && name && !name.endsWith("Ctrl");
  // Windows reports AltGr as Ctrl+Alt: its characters (@ on a German keyboard) are typed.
  const shortcut = (e.ctrlKey && !e.getModifierState("AltGraph")) || e.metaKey || withCtrl;
  // A character goes by the text rule (docs/protocol.md), as the Type field's: one CC's
  // keyboard does not type (untypable) is not sent (a key that gives U+0085 sent it as the
  // byte 85, a block character no keyboard types); one past U+00FF goes for the gateway to
  // send as ? and name (a Russian keyboard's ж typed nothing, unsaid).
  const printable = [...e.key].length === 1 && !shortcut && !untypable.test(e.key);
  if (!name && !printable) return;
  if (!dead) { // no text lands in the field: the character goes here, once
    e.preventDefault();
    if (v && !up) v.prevented = name || e.key;
  }
  if (v && up && v.prevented === (name || e.key)) v.prevented = "";
  const events = keyEvents(name, !up && printable ? e.key : "", up, e.repeat);
  if (withCtrl) v.ctrl = name;
  else if (up && v && v.ctrl === name) {
    events.push(...keyEvents("leftCtrl", "", true));
    holdCtrl(v, false);
  } else if (up && v && v.ctrl && name && name.endsWith("Ctrl")) holdCtrl(v, false); // the keyboard's Ctrl let go: CC has none down
  if (v) for (const event of events) {
    if (event.type === "key") v.down.add(event.name);
    else if (event.type === "key_up") v.down.delete(event.name);
  }
  // The Type field starts afresh, as for an on-screen key: what it holds is no longer what is
  // left of the computer's cursor (typed in it after Enter on the screen, it rubbed out the
  // old line's characters on the new line first).
  if (v && !up) clearTyped(v);
  send(events);
}

// onComposed sends the text that landed in the screen's field (screen-keys) and empties it:
// what no key's keydown typed (onKey prevents those), so an input method's text once composed
// (日本, é from a dead key or a compose key), an emoji picker's or dictation's, each character
// once. It goes as the Type field types a text put in at once (typeLines: the text rule, each
// line break as Enter), and the field starts afresh. While a text is still being composed the
// field keeps it (emptying it would end the composition); composed, it is sent from
// compositionend, and a browser's input event after that finds the field empty.
function onComposed(v, composing) {
  const field = $("screen-keys");
  if (composing) return;
  const text = field.value;
  field.value = "";
  if (!v || !text) return;
  clearTyped(v);
  typeLines(v, text.split(/\r\n|\r|\n/));
  clearTyped(v);
}

// focusScreen gives the keyboard to the screen: its field (screen-keys), which a compose
// key's, a dead key's and an input method's text reaches, where the screen itself (no field)
// got keys only.
function focusScreen() {
  $("screen-keys").focus({ preventScroll: true });
}

// placeKeys puts the screen's field over the computer's cursor (where an input method shows
// what it composes, and its candidates), or over the screen's corner when the cursor is off;
// within the part of the screen in view: a screen wider than a phone's window (a monitor's)
// scrolls in its box, and the field at a cursor out of view made the page as wide as the
// cursor was far, the whole page scrolling sideways.
function placeKeys() {
  const field = $("screen-keys"), screen = $("screen"), at = screen.querySelector(".cursor") || screen;
  const box = at.getBoundingClientRect(), shown = screen.getBoundingClientRect(), viewer = $("viewer").getBoundingClientRect();
  const left = Math.max(Math.min(box.left, shown.right - field.offsetWidth), shown.left);
  field.style.left = left - viewer.left + "px";
  field.style.top = box.top - viewer.top + "px";
}

// letKeysGo lets go, on the computer, the keyboard's keys down on view v's screen when the
// screen loses the focus (a click elsewhere, another window), as CC does when its screen does:
// their key_up goes elsewhere, and CC would hold Ctrl or Shift down until they were pressed on
// the screen again.
function letKeysGo(v) {
  if (!v || !v.down.size) return;
  const events = [...v.down].map((name) => ({ type: "key_up", name }));
  v.down.clear();
  send(events);
}

// holdCtrl shows whether view v holds the on-screen Ctrl: true from its tap (CC got its key
// event) until the next key or a second tap let it go (key_up); a keyboard's key name while
// that key, pressed with it, is down.
function holdCtrl(v, held) {
  v.ctrl = held;
  $("ctrl").setAttribute("aria-pressed", String(!!held));
}

// tapKey is an on-screen key tapped on view v: Ctrl goes down (its key event: edit opens its
// menu) and stays down for the next key, or, tapped again, is let go; any other key is
// pressed and let go, with Ctrl when it is down. The Type field starts afresh: what it holds
// is no longer what is left of the computer's cursor.
function tapKey(v, name) {
  let events;
  if (name === "leftCtrl") {
    events = keyEvents(name, "", !!v.ctrl);
    // Ctrl tapped where a press is not sent (the greyed screen, the computer away) is not
    // held: the computer never got it, and the next key went with it, typing no character.
    if (v.ctrl || typable(v)) holdCtrl(v, !v.ctrl);
  } else {
    events = pressEvents(name, "", !!v.ctrl);
    holdCtrl(v, false);
  }
  clearTyped(v);
  send(events);
}

// A key held down (a long press on an arrow or ⌫) repeats as a keyboard's does: after
// repeatAfterMs its key event, then one marked held every repeatEveryMs, and its key_up (with
// Ctrl let go, when it was down) once it is let go, or once the window loses the focus or the
// page is hidden (another app over the page may end the press with no pointer event, and the
// key went on repeating on the computer, once a second in a hidden page, for as long as it
// stayed open); the click that ends the press is no further tap. Ctrl, Tab, Home, End and
// Enter do not repeat: a long press is one tap.
const repeating = new Set(["up", "down", "left", "right", "backspace"]);
const repeatAfterMs = 400, repeatEveryMs = 80;

// holdKey follows pointer event e, a press on the on-screen key button, until it ends.
function holdKey(e, button) {
  const name = button.dataset.key, v = view;
  button.repeated = false;
  if (!v || !repeating.has(name) || !e.isPrimary || e.button !== 0) return;
  try {
    button.setPointerCapture(e.pointerId); // let go off the button, it is let go all the same
  } catch { // a pointer the browser does not know (none goes down without one)
  }
  let timer = setTimeout(() => {
    button.repeated = true;
    clearTyped(v);
    send(keyEvents(name, "", false, false));
    timer = setInterval(() => {
      if (view === v) send(keyEvents(name, "", false, true)); else end({ type: "closed" });
    }, repeatEveryMs);
  }, repeatAfterMs);
  const ends = ["pointerup", "pointercancel", "lostpointercapture"];
  const hidden = () => { if (document.visibilityState === "hidden") end({ type: "hidden" }); };
  const end = (ev) => {
    clearTimeout(timer);
    clearInterval(timer);
    for (const type of ends) button.removeEventListener(type, end);
    window.removeEventListener("blur", end);
    document.removeEventListener("visibilitychange", hidden);
    if (!button.repeated) return;
    if (ev.type !== "pointerup") button.repeated = false; // no click follows
    if (view !== v) return; // the view was closed: its computer gets nothing more
    send(pressEvents(name, "", !!v.ctrl).filter((event) => event.type === "key_up"));
    holdCtrl(v, false);
  };
  for (const type of ends) button.addEventListener(type, end);
  window.addEventListener("blur", end);
  document.addEventListener("visibilitychange", hidden);
}

// clearTyped empties the Type field of view v; v.typed is what the field held at its last
// input (onTyped sends what changed since).
function clearTyped(v) {
  $("type-text").value = "";
  v.typed = "";
}

// onTyped sends what the Type field's input changed (a phone's keyboard may rewrite a word it
// composes or corrects, not just add a character): typeLines of the field's text.
function onTyped(v) {
  const field = $("type-text");
  if (!typeLines(v, [field.value])) field.value = v.typed; // it shows what the computer got
}

// typeLines sends what view v's Type field changed from what it held at its last input
// (v.typed) to lines, its text cut at line breaks: Backspace for each character of what
// followed the part both share, then each new character as its key and char; each line after
// the first after Enter, as the field's own Enter, which starts it afresh (v.typed is the last
// line); typeEvents says what a character sends, of the text as the text rule reads it
// (ccText). A character typed with Ctrl held goes as Ctrl with its key, typing none; the field
// starts afresh then. More than typeMax characters
// to type are not typed, none of them (false): the status says so. Nor is anything typed on
// a greyed screen (typable; send would drop it): false, v.typed left as the computer has it,
// so the field is put back to it (it kept what was never sent, as if typed). The on-screen
// Ctrl held is let go then, as by a key tapped there (tapKey): its release goes.
function typeLines(v, lines) {
  if (!typable(v)) {
    if (v.ctrl) {
      holdCtrl(v, false);
      send(keyEvents("leftCtrl", "", true));
    }
    return false;
  }
  lines = lines.map(ccText); // é written decomposed is é, not e and "?"
  const typed = typedCount(v.typed, lines);
  if (typed > typeMax) { // said until the next keys go through, as an answer's words are
    say(v, tooLongToType(typed));
    return false;
  }
  const events = [];
  let ctrl = !!v.ctrl, before = [...v.typed];
  lines.forEach((line, i) => {
    if (i > 0) {
      events.push(...pressEvents("enter", "", ctrl));
      ctrl = false;
      before = [];
    }
    const now = [...line];
    const same = shared(before, now);
    for (let j = same; j < before.length; j++) events.push(...pressEvents("backspace", "", false));
    for (const ch of now.slice(same)) {
      events.push(...typeEvents(ch, ctrl));
      ctrl = false;
    }
  });
  v.typed = lines[lines.length - 1];
  if (v.ctrl) {
    holdCtrl(v, false);
    clearTyped(v);
  }
  send(events); // many keys at once (a word a phone's keyboard puts in) go in parts, in order
  return true;
}

// typeMax is the most characters (line breaks too) the Type field types for one input, a text
// put in at once: some 100 requests of the computer's (each character a key, its char and
// key_up), typed in seconds. A text of megabytes went whole, key by key, for as long as it
// took, past any use of a screen: a file is put on the computer (trap-sandbox put).
const typeMax = 4096;

// typedCount is how many characters typeLines types for lines when the Type field held typed:
// those after the part both share on the first line, and every later line's, each with its
// line break.
function typedCount(typed, lines) {
  const first = [...lines[0]];
  return lines.slice(1).reduce((n, line) => n + 1 + [...line].length, first.length - shared([...typed], first));
}

// shared is how many characters lists a and b start with alike.
function shared(a, b) {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

// tooLongToType is the status when a text put into the Type field at once is not typed.
function tooLongToType(n) {
  return "Not typed: the text is " + n + " characters; the Type field types " + typeMax +
    " at most at once. Put a longer text on the computer as a file (trap-sandbox put).";
}

// typeEvents is what the Type field sends for character ch typed (with Ctrl held: ctrl): its
// key and char; a tab (copied code's) the Tab key, which types none (edit indents, the shell
// completes); any other character CC's keyboard does not type (untypable) "?", as CC pastes
// one: the computer refused the whole request for a control character below 32, and took
// U+0085 as the byte 85, a block character no keyboard types. The no-break space and the soft
// hyphen are typed, as a keyboard on the screen types them (they went as "?").
function typeEvents(ch, ctrl) {
  if (ch === "\t") return pressEvents("tab", "", ctrl);
  if (untypable.test(ch)) ch = "?";
  return pressEvents(charKey(ch), ch, ctrl);
}

// onInsert types a text put into the Type field at once that holds line breaks (a phone
// keyboard's clipboard, a drop, not a paste: that is the screen's) line by line, each line
// break as Enter, as typed: the field, one line, would put spaces for them and type the lines
// as one. The field then holds the last line, its caret where the text ended.
function onInsert(v, e) {
  const text = e.data ?? (e.dataTransfer ? e.dataTransfer.getData("text/plain") : null);
  if (e.isComposing || !text || !/[\r\n]/.test(text)) return;
  e.preventDefault();
  const field = e.target, ctrl = v.ctrl;
  const rest = field.value.slice(field.selectionEnd);
  if (!typeLines(v, (field.value.slice(0, field.selectionStart) + text + rest).split(/\r\n|\r|\n/))) return;
  if (ctrl) return; // the field started afresh
  field.value = v.typed;
  const caret = v.typed.length - ccText(rest).length; // v.typed is composed
  field.setSelectionRange(caret, caret);
}

// inputEventsMax is the most events one screen.input queues on the computer (docs/protocol.md;
// inputCost counts them): the gateway's computer.MaxInputEvents, which a test of the package
// holds it to. The page puts keys typed meanwhile together in a call up to it; a send of more
// (a text put in at once) goes alone, typed by the gateway in several requests.
const inputEventsMax = 128;

// cellAt is the screen's cell {x, y} (from 1, as CC counts) under pointer event e, or null off
// the rows (the frame's border). The rows are equal, each cell an equal part of a row's width;
// the cell is found from the pointer's place, not its target, which a captured pointer (a
// finger on a touch screen, a button held) keeps from its press. held puts a place off the
// rows on the nearest cell, as CC does for a held button's drags and release.
function cellAt(e, held) {
  const screen = $("screen");
  const width = +screen.dataset.width, rows = screen.querySelectorAll(".row");
  if (!width || !rows.length) return null;
  const first = rows[0].getBoundingClientRect(), last = rows[rows.length - 1].getBoundingClientRect();
  const x = Math.floor((e.clientX - first.left) / (first.width / width)) + 1;
  const y = Math.floor((e.clientY - first.top) / ((last.bottom - first.top) / rows.length)) + 1;
  if (!held && (x < 1 || x > width || y < 1 || y > rows.length)) return null;
  return { x: Math.min(Math.max(x, 1), width), y: Math.min(Math.max(y, 1), rows.length) };
}

// buttons are CC's mouse buttons (1 left, 2 right, 3 middle) by the browser's (0, 1, 2).
const buttons = [1, 3, 2];

// onPointerDown is a press on the screen: a mouse's button or a finger (a touch screen's, whose
// drag on the screen is the computer's, not the page's: the screen's touch-action). The
// computer gets it as CC's mouse_click, held until its release (letMouseGo); a client older
// than pressApartSince gets a click, press and release at once, as before.
function onPointerDown(e) {
  if (!e.isPrimary) return; // a second finger: the browser's (a pinch), which ends the first
  focusScreen();
  const v = view, cell = cellAt(e, false), button = buttons[e.button];
  if (!v) return;
  letMouseGo(v);
  if (!cell || !button || !takesMouse() || !typable(v)) return;
  send([{ type: v.pressApart ? "mouse_click" : "click", button, x: cell.x, y: cell.y }]);
  v.held = { button, x: cell.x, y: cell.y, pointerId: e.pointerId };
  try {
    $("screen").setPointerCapture(e.pointerId); // its moves and release off the screen are the drag's
  } catch { // a pointer the browser does not know (none goes down without one)
  }
}

// heldBits are the browser's bits (PointerEvent.buttons) of CC's mouse buttons 1, 2 and 3.
const heldBits = [0, 1, 2, 4];

// onPointerMove sends a drag (CC's mouse_drag) when the pointer, its button held since it went
// down on the screen, moves onto another cell: one a cell, as CC sends them, so paint draws
// along the way; off the screen, at the nearest cell, as CC does. A computer whose client is
// older than dragSince gets none (its view says so once): it would refuse them, and the keys
// sent with them.
function onPointerMove(e) {
  const v = view;
  if (!v || !v.held || e.pointerId !== v.held.pointerId) return;
  if (!(e.buttons & heldBits[v.held.button])) { // let go where the page did not see it
    letMouseGo(v);
    return;
  }
  const cell = cellAt(e, true);
  if (!cell || (cell.x === v.held.x && cell.y === v.held.y)) return;
  v.held.x = cell.x;
  v.held.y = cell.y;
  v.held.dragged = true;
  if (v.drags) send([{ type: "drag", button: v.held.button, x: cell.x, y: cell.y }]);
  else sayOnce(v, noDrags);
}

// onPointerUp is the held button let go, or the press ended otherwise (pointercancel: the
// browser took the pointer, as for a pinch): its release at the cell the pointer was last on.
function onPointerUp(e) {
  if (view && view.held && e.pointerId === view.held.pointerId) letMouseGo(view);
}

// letMouseGo lets go of view v's held button on the computer, where the pointer last was on the
// screen (CC's mouse_up), as the button let go or the page no longer following it (the window's
// focus lost, the page hidden). A client older than pressApartSince got its release with the
// press: once it has taken a drag, the view says so (after its drags, whose answers would
// have put Live over it).
function letMouseGo(v) {
  if (!v || !v.held) return;
  const held = v.held;
  v.held = null;
  if (v.pressApart) send([{ type: "mouse_up", button: held.button, x: held.x, y: held.y }]);
  else if (v.drags && held.dragged) sayOnce(v, releasedAtPress);
}

// sayOnce shows words in view v's status the first time the pointer drags on its screen.
function sayOnce(v, words) {
  if (!v.live || v.saidDrags) return;
  v.saidDrags = true;
  say(v, words);
}

// dragSince is the first client that takes screen.input's drag, pressApartSince the first that
// takes a press and its release apart (mouse_click and mouse_up; docs/screen.md), as the
// gateway says them in inputs.js (inputTypesSince). A replica of an older build, during a
// rollout, serves a list without the newer types: such a type is undefined here, which no
// client is known to take (olderVersion), so the view sends what every client takes.
const dragSince = inputTypesSince.drag;
const pressApartSince = !inputTypesSince.mouse_click || !inputTypesSince.mouse_up ? undefined :
  olderVersion(inputTypesSince.mouse_click, inputTypesSince.mouse_up) ? inputTypesSince.mouse_up : inputTypesSince.mouse_click;
// unnamedBy is the start of a status about input types (names) that this page's inputs.js
// does not name: the status says why, not that the client is older than "undefined".
const unnamedBy = (names) => "This page's gateway (an older build, or a replica of one) does not name " + names +
  " among the inputs a computer takes";
// noDrags is the status when the pointer drags on a computer whose client takes no drag.
const noDrags = (dragSince ? "This computer's client is older than trapos-sandbox " + dragSince : unnamedBy("drag")) +
  " and takes no drag: a press reaches it, not the moves after it. The gateway's install line run on it upgrades it.";
// releasedAtPress is the status when the pointer drags on a computer whose client takes drags
// but no press apart from its release.
const releasedAtPress = (pressApartSince ? "This computer's client is older than trapos-sandbox " + pressApartSince :
  unnamedBy("mouse_click and mouse_up")) +
  ": a drag reaches it, its release (mouse_up) at the press, not where the pointer lets go. The gateway's install line run on it upgrades it.";

// olderVersion is whether version ("0.5.20"; anything else, a client too old to say, or none)
// comes before than ("0.5.21"); every version does before a than that is none (an input type
// the served inputs.js does not name): no client is known to take it.
function olderVersion(version, than) {
  const parse = (s) => typeof s === "string" && /^\d+\.\d+\.\d+$/.test(s) ? s.split(".").map(Number) : null;
  const have = parse(version), want = parse(than);
  if (!have || !want) return true;
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i] < want[i];
  return false;
}

// newView is a view of computer traposId, not live yet: every field the page keeps of it (the
// list at `let view`), in one place, which the browser tests start from too.
function newView(traposId, monitor) {
  return { traposId, monitor: monitor || "", monitorNamed: false, monitors: null, monitorsLeftOut: 0, gone: "", abort: new AbortController(), queue: Promise.resolve(), down: new Set(), pending: [], presses: 0,
    sending: false, busy: false, dropped: false, sends: 0, said: "", saidAt: 0, live: false, shownLive: false, ctrl: false, typed: "", left: "",
    unsent: new Set(), prevented: "", newest: "", drawing: false, held: null, drags: false, pressApart: false, saidDrags: false,
    pressed: new Set(), owed: [], opened: 0, pasted: null, inFlight: "", retrying: false, sentAsQ: [], sentAsQAt: 0 };
}

// takesMouse reports whether the computer on the screen takes the mouse: CC fires mouse events
// on advanced computers only, so a basic one's (its frame's colour false) gets no click, drag or
// scroll from the page either; a click there only gives it the keyboard (focusScreen).
function takesMouse() {
  return $("screen").dataset.mouse !== "false";
}

function onWheel(e) {
  const cell = cellAt(e, false);
  if (!cell || !e.deltaY || !view || !view.live || !takesMouse()) return; // the page scrolls as ever
  if (!typable(view)) return;
  e.preventDefault();
  send([{ type: "scroll", direction: e.deltaY > 0 ? 1 : -1, x: cell.x, y: cell.y }]);
}

// screenLabel is the computer's own screen's name for a screen reader (index.html's): a
// monitor's view names its screen read only instead (open).
const screenLabel = $("screen").getAttribute("aria-label");

function open(traposId, monitor) {
  stop();
  show("viewer");
  $("viewer-id").textContent = traposId;
  // A monitor's view is read only: no keys, Type, Paste or Terminate, and the heading says so.
  $("viewer").classList.toggle("monitor-view", !!monitor);
  $("viewer-monitor").hidden = !monitor;
  $("viewer-monitor").textContent = monitor ? monitorHeading(monitor, 0) : "";
  $("screen").setAttribute("aria-label", monitor ? "The monitor's screen: read only, it takes no keys" : screenLabel);
  if (monitor) $("screen").removeAttribute("aria-describedby"); // screen-help: how keys go to the computer
  else $("screen").setAttribute("aria-describedby", "screen-help");
  $("viewer-screens").hidden = true; // until its computer names its monitors (learnMonitors)
  $("viewer-kind").hidden = true; // the last computer's kind: its first frame says this one's
  $("screen").replaceChildren();
  $("screen-text").textContent = "";
  shownUnseen("");
  $("wide-note").hidden = true; // until its first frame is drawn (markWide)
  $("viewer").classList.remove("stale");
  $("viewer").classList.add("blank"); // until its first frame: no screen to type on (showLive)
  note();
  status("Connecting…");
  view = newView(traposId, monitor);
  titled(view, "connecting");
  holdCtrl(view, false);
  clearTyped(view);
  follow(view);
  focusScreen();
}

function stop() {
  shown++;
  if (view) closeView(view);
  view = null;
  document.title = consoleTitle;
  clearInterval(listTimer);
  listTimer = null;
}

function route() {
  // A traposId and a monitor's name are each one %-escaped part (screenHash), "/" included.
  const m = location.hash.match(/^#\/computer\/([^/]+)(?:\/monitor\/([^/]+))?$/) || location.hash.match(/^#\/computer\/(.+)$/);
  let traposId = null, monitor = "";
  try {
    traposId = m && decodeURIComponent(m[1]);
    monitor = m && m[2] ? decodeURIComponent(m[2]) : "";
  } catch { // not a traposId this page made (a bad %-escape): the list
    traposId = null;
  }
  if (traposId) { open(traposId, monitor); return; }
  stop();
  loadList();
  listTimer = setInterval(loadList, retryMs);
}

document.addEventListener("DOMContentLoaded", () => {
  $("login").addEventListener("submit", (e) => {
    e.preventDefault();
    token = $("token").value; // kept once the gateway takes it; refused, forgotten
    for (const told of logins.splice(0)) told();
    route();
  });
  $("logout").addEventListener("click", logOut);
  $("login-open").addEventListener("click", openLogin);
  // Another tab logged out: so does this one, when it holds a token or one is being tried.
  if (tabsChannel) tabsChannel.addEventListener("message", (e) => {
    if (e.data === loggedOutMessage && token) loggedOut("Logged out in another tab: this tab no longer holds the token either.");
  });
  // The keyboard types on the screen's field (focusScreen): the screen given the focus (Tab,
  // a click) hands it on. Keys are read where they land and from the screen (its own focus).
  $("screen").addEventListener("focus", focusScreen);
  for (const id of ["screen", "screen-keys"]) {
    $(id).addEventListener("keydown", (e) => onKey(e, false));
    $(id).addEventListener("keyup", (e) => onKey(e, true));
    $(id).addEventListener("paste", (e) => {
      e.preventDefault();
      paste(e.clipboardData.getData("text") || "");
    });
  }
  $("screen-keys").addEventListener("blur", () => letKeysGo(view));
  // A held mouse button is let go with them: the page no longer follows the pointer.
  window.addEventListener("blur", () => letMouseGo(view));
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") letMouseGo(view); });
  // The window losing the focus, or the page hidden (Ctrl+T's new tab, whose t the page never
  // gets, another window, a phone's other app), lets them go too: their key_up goes elsewhere,
  // and a browser need not blur the field first (a headless one does not at all).
  window.addEventListener("blur", () => letKeysGo(view));
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") letKeysGo(view); });
  // A browser that types the character of a key whose keydown was prevented (sent already)
  // into the field all the same (a char event apart from its keydown, as DevTools send one)
  // types it once: the field takes no text until that key is let go.
  $("screen-keys").addEventListener("beforeinput", (e) => {
    if (view && view.prevented && !e.isComposing && e.inputType.startsWith("insert")) {
      e.preventDefault();
      view.prevented = "";
    }
  });
  $("screen-keys").addEventListener("input", (e) => onComposed(view, e.isComposing));
  $("screen-keys").addEventListener("compositionend", () => onComposed(view, false));
  // A mouse's press keeps the focus on the screen's field; a middle click would paste or scroll.
  $("screen").addEventListener("mousedown", (e) => e.preventDefault());
  $("screen").addEventListener("pointerdown", onPointerDown);
  $("screen").addEventListener("pointermove", onPointerMove);
  for (const type of ["pointerup", "pointercancel"]) window.addEventListener(type, onPointerUp);
  $("screen").addEventListener("contextmenu", (e) => e.preventDefault()); // right click is CC's
  $("screen").addEventListener("wheel", onWheel, { passive: false });
  // The field keeps what the screen would paste: a browser's text field joins a paste's lines
  // ("a" and "b" became "ab"), which CC never types. What it left out is said once its text is
  // pasted, as long as it is the text the paste left (leftOut): the lines were dropped unsaid.
  $("paste-text").addEventListener("paste", (e) => {
    e.preventDefault();
    const field = e.target, p = pasteLine(e.clipboardData.getData("text") || "");
    field.setRangeText(p.line, field.selectionStart, field.selectionEnd, "end");
    field.leftOut = { value: field.value, more: p.more, cut: p.cut };
  });
  $("paste-form").addEventListener("submit", (e) => {
    e.preventDefault();
    // A view not live sends no paste (send): its text stays in the field, to paste once the
    // view says Live again, where emptying the field lost it as if it had gone.
    if (!view || !typable(view)) return;
    const field = $("paste-text"), leftOut = field.leftOut && field.leftOut.value === field.value ? field.leftOut : null;
    paste(field.value, leftOut);
    field.value = "";
    field.leftOut = null;
    focusScreen();
  });
  // A phone shows no keyboard for the screen: its keys are buttons, and the Type field types.
  for (const button of document.querySelectorAll("#touch [data-key]")) {
    button.addEventListener("mousedown", (e) => e.preventDefault()); // the Type field keeps the focus, and a phone its keyboard
    button.addEventListener("contextmenu", (e) => e.preventDefault()); // a long press repeats the key
    button.addEventListener("pointerdown", (e) => holdKey(e, button));
    button.addEventListener("click", () => {
      if (button.repeated) button.repeated = false; // the end of a long press: its key_up went
      else if (view) tapKey(view, button.dataset.key);
    });
  }
  $("type-text").addEventListener("input", () => { if (view) onTyped(view); });
  $("type-text").addEventListener("beforeinput", (e) => { if (view && e.inputType.startsWith("insert")) onInsert(view, e); });
  // A paste into the field is the computer's paste, as on the screen (the field joined its
  // lines, then typed them as one); the field starts afresh.
  $("type-text").addEventListener("paste", (e) => {
    if (!view) return;
    e.preventDefault();
    clearTyped(view);
    paste(e.clipboardData.getData("text") || "");
  });
  // The field's Enter is the computer's: it submits the field's form (a phone's keyboard may
  // not say which key it pressed, and it submits none while it composes a word).
  $("type-form").addEventListener("submit", (e) => {
    e.preventDefault();
    if (view) tapKey(view, "enter");
  });
  $("type-text").addEventListener("keydown", (e) => {
    // Backspace in an empty field deletes nothing there (no input follows): the computer's.
    if (!view || e.isComposing || e.key !== "Backspace" || e.target.value) return;
    e.preventDefault();
    tapKey(view, "backspace");
  });
  $("terminate").addEventListener("click", () => { send([{ type: "terminate" }]); focusScreen(); });
  // The picker opens the computer's own screen or one of its monitors, as a link would.
  $("viewer-screen").addEventListener("change", (e) => {
    if (view) pickScreen(view, e.target.value);
  });
  window.addEventListener("hashchange", route);
  window.addEventListener("pagehide", leavePage);
  // The screen's cells change size with the window (a phone turned, a window made narrower, a
  // phone's keyboard up): the field follows the cursor, in the part of the screen in view.
  window.addEventListener("resize", () => { fitBelow(); placeKeys(); markWide(); showTyping(); });
  touchPointer.addEventListener("change", markWide); // a tablet's keyboard and touchpad put on, or taken off
  followPixelRatio();
  // The keys under the screen come and go with what its owner allows (viewOnly), the note of
  // rows not yet seen with the frames: the screen makes room for them (fitBelow).
  const resized = new ResizeObserver(fitBelow);
  resized.observe($("touch"));
  resized.observe($("screen")); // shown
  resized.observe(document.querySelector("header")); // a long status wraps under the title
  showLogout();
  route();
});
